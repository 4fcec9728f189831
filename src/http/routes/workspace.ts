import { z } from 'zod';
import { createToken, createTokenInput, listTokens, revokeToken } from '../../core/auth/tokens.ts';
import { getWorkflow } from '../../core/workflow/get.ts';
import { coreCtx } from '../context.ts';
import { cachedJson } from '../json.ts';
import { defineRoute, idParam } from '../route-table.ts';
import { createdTokenSchema, tokenListSchema } from '../../core/auth/schema.ts';
import { okSchema } from '../../core/response-schema.ts';

/** Workspace-level routes: workflow (token read) and token management (session only). */
export const workspaceRoutes = [
  defineRoute({
    method: 'GET',
    path: '/workflow',
    op: getWorkflow,
    input: {},
    // the cached workflow object is serialised once, not per request
    respond: (ctx, workflow) => {
      ctx.type = 'application/json';
      ctx.body = cachedJson(workflow);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/tokens',
    action: 'tokens.list',
    input: {},
    output: tokenListSchema,
    handler: async ({ ctx, deps }) => {
      ctx.body = await listTokens(coreCtx(deps, ctx));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/tokens',
    action: 'tokens.create',
    input: { body: createTokenInput },
    output: { 201: createdTokenSchema },
    handler: async ({ ctx, deps }) => {
      ctx.status = 201;
      ctx.body = await createToken(coreCtx(deps, ctx), ctx.request.body);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/tokens/:id',
    action: 'tokens.revoke',
    input: { params: z.object({ id: idParam() }) },
    output: okSchema,
    handler: async ({ ctx, deps, params }) => {
      ctx.body = await revokeToken(coreCtx(deps, ctx), params);
    },
  }),
];
