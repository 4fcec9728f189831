import { Router } from '@koa/router';
import { listDocuments } from '../../core/documents/list.ts';
import { coreCtx, type AppDeps, type AppState } from '../context.ts';
import { authenticate } from '../middleware/auth.ts';

/** Routes for client timesheet documents (issue 6): the list; downloads come with rendering. */
export function documentsRoutes(deps: AppDeps) {
  const r = new Router<AppState>();
  const auth = authenticate(deps);

  r.get('/documents', auth, async (ctx) => {
    ctx.body = await listDocuments(coreCtx(deps, ctx), ctx.query);
  });
  return r;
}
