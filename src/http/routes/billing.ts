import { z } from 'zod';
import { getRun, listRunEntries, listRunEntriesInput, listRuns, listRunsInput } from '../../core/billing/list.ts';
import { startRun, startRunInput } from '../../core/billing/start.ts';
import { voidRun, voidRunInput } from '../../core/billing/void.ts';
import { coreCtx } from '../context.ts';
import { defineRoute, idParam } from '../route-table.ts';
import { billingRunListSchema, billingRunSchema, runEntryPageSchema, runPreviewSchema } from '../../core/billing/run-schema.ts';

const runParams = z.object({ id: idParam() });

/** Billing runs (issue 11): Owner/Admin from a browser session. */
export const billingRoutes = [
  defineRoute({
    method: 'POST',
    path: '/billing/runs',
    action: 'billing.runs.create',
    input: { body: startRunInput },
    output: { 200: runPreviewSchema, 201: billingRunSchema },
    handler: async ({ ctx, deps }) => {
      const result = await startRun(coreCtx(deps, ctx), ctx.request.body);
      ctx.status = result.dryRun ? 200 : 201;
      ctx.body = result;
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/billing/runs',
    action: 'billing.runs.list',
    input: { query: listRunsInput },
    output: billingRunListSchema,
    handler: async ({ ctx, deps }) => {
      ctx.body = await listRuns(coreCtx(deps, ctx), ctx.query);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/billing/runs/:id',
    action: 'billing.runs.read',
    input: { params: runParams },
    output: billingRunSchema,
    handler: async ({ ctx, deps, params }) => {
      ctx.body = await getRun(coreCtx(deps, ctx), { runId: params.id });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/billing/runs/:id/entries',
    action: 'billing.runs.read',
    input: { params: runParams, query: listRunEntriesInput.omit({ runId: true }) },
    output: runEntryPageSchema,
    handler: async ({ ctx, deps, params }) => {
      ctx.body = await listRunEntries(coreCtx(deps, ctx), { ...ctx.query, runId: params.id });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/billing/runs/:id/void',
    action: 'billing.runs.void',
    input: { params: runParams, body: voidRunInput.omit({ runId: true }) },
    output: billingRunSchema,
    handler: async ({ ctx, deps, params }) => {
      const body = (ctx.request.body ?? {}) as Record<string, unknown>;
      ctx.body = await voidRun(coreCtx(deps, ctx), { ...body, runId: params.id });
    },
  }),
];
