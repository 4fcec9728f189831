import { Router } from '@koa/router';
import { createToken, listTokens, revokeToken } from '../../core/auth/tokens.ts';
import { parseUuid } from '../../core/validation.ts';
import { getWorkflow } from '../../core/workflow/get.ts';
import { coreCtx, type AppDeps, type AppState } from '../context.ts';
import { cachedJson } from '../json.ts';
import { authenticate } from '../middleware/auth.ts';

/** Workspace-level routes: workflow (token read) and token management (session only). */
export function workspaceRoutes(deps: AppDeps) {
  const r = new Router<AppState>();
  const auth = authenticate(deps);

  r.get('/workflow', auth, async (ctx) => {
    ctx.type = 'application/json';
    ctx.body = cachedJson(await getWorkflow(coreCtx(deps, ctx)));
  });
  r.get('/tokens', auth, async (ctx) => {
    ctx.body = await listTokens(coreCtx(deps, ctx));
  });
  r.post('/tokens', auth, async (ctx) => {
    ctx.status = 201;
    ctx.body = await createToken(coreCtx(deps, ctx), ctx.request.body);
  });
  r.delete('/tokens/:id', auth, async (ctx) => {
    ctx.body = await revokeToken(coreCtx(deps, ctx), parseUuid(ctx.params.id));
  });
  return r;
}
