import { Router } from '@koa/router';
import type { AppDeps, AppState } from '../context.ts';

/** Routes for GET /tickets and GET /tickets/:ref (issue 3). */
export function ticketsReadRoutes(_deps: AppDeps) {
  const r = new Router<AppState>();
  return r;
}
