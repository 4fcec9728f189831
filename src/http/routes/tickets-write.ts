import { Router } from '@koa/router';
import type { AppDeps, AppState } from '../context.ts';

/** Routes for ticket create, update, move, archive, delete, redact (issue 3). */
export function ticketsWriteRoutes(_deps: AppDeps) {
  const r = new Router<AppState>();
  return r;
}
