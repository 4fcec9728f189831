import { z } from 'zod';
import { createBank, createBankInput, depositInput, depositToBank, listBanks, listClientBanks } from '../../core/banks/manage.ts';
import { coreCtx } from '../context.ts';
import { defineRoute, idParam } from '../route-table.ts';
import { bankBalanceSchema, bankListSchema, depositResultSchema } from '../../core/banks/schema.ts';

/** Time banks (issue 11): Owner/Admin from a browser session; token holders read balances over MCP. */
export const banksRoutes = [
  defineRoute({
    method: 'GET',
    path: '/billing/banks',
    action: 'banks.list',
    input: {},
    output: bankListSchema,
    handler: async ({ ctx, deps }) => {
      ctx.body = await listBanks(coreCtx(deps, ctx));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/billing/banks',
    action: 'banks.create',
    input: { body: createBankInput },
    output: { 201: bankBalanceSchema },
    handler: async ({ ctx, deps }) => {
      ctx.body = await createBank(coreCtx(deps, ctx), ctx.request.body);
      ctx.status = 201;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/billing/banks/:id/deposits',
    action: 'banks.deposit',
    input: { params: z.object({ id: idParam() }), body: depositInput },
    output: { 201: depositResultSchema },
    handler: async ({ ctx, deps, params }) => {
      const body = (ctx.request.body ?? {}) as Record<string, unknown>;
      ctx.body = await depositToBank(coreCtx(deps, ctx), { ...body, bankId: params.id });
      ctx.status = 201;
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/clients/:id/banks',
    action: 'banks.list',
    input: { params: z.object({ id: idParam() }) },
    output: bankListSchema,
    handler: async ({ ctx, deps, params }) => {
      ctx.body = await listClientBanks(coreCtx(deps, ctx), { clientId: params.id });
    },
  }),
];
