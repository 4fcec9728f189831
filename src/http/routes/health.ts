import { Router } from '@koa/router';
import { migrationsApplied } from '../../db/migrate.ts';
import type { AppDeps, AppState } from '../context.ts';

/** /healthz: the process answers. /readyz: the database answers and every migration is applied. */
export function healthRoutes(deps: AppDeps) {
  const r = new Router<AppState>();
  r.get('/healthz', (ctx) => {
    ctx.body = { ok: true };
  });
  r.get('/readyz', async (ctx) => {
    try {
      const ready = await migrationsApplied(deps.sql);
      ctx.status = ready ? 200 : 503;
      ctx.body = ready ? { ok: true } : { ok: false, reason: 'migrations_pending' };
    } catch {
      ctx.status = 503;
      ctx.body = { ok: false, reason: 'database_unreachable' };
    }
  });
  return r;
}
