import { z } from 'zod';
import { createToken, createTokenInput, listTokens, revokeToken } from '../../core/auth/tokens.ts';
import { getWorkflow } from '../../core/workflow/get.ts';
import { cachedJson } from '../json.ts';
import { defineRoute, idParam } from '../route-table.ts';

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
  defineRoute({ method: 'GET', path: '/tokens', op: listTokens, input: {} }),
  defineRoute({ method: 'POST', path: '/tokens', op: createToken, input: { body: createTokenInput }, status: 201 }),
  defineRoute({ method: 'DELETE', path: '/tokens/:id', op: revokeToken, input: { params: z.object({ id: idParam() }) } }),
];
