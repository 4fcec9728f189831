import { Router } from '@koa/router';
import { listChanges } from '../../core/changes/feed.ts';
import { coreCtx, type AppDeps, type AppState } from '../context.ts';
import { authenticate } from '../middleware/auth.ts';

/** GET /changes: the commit-ordered change feed for pollers (beyond the contract). */
export function changesRoutes(deps: AppDeps) {
  const r = new Router<AppState>();
  r.get('/changes', authenticate(deps), async (ctx) => {
    const page = await listChanges(coreCtx(deps, ctx), ctx.query);
    ctx.set('X-Poll-Interval', String(page.pollAfterSeconds));
    ctx.body = page;
  });
  return r;
}
