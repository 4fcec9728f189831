import { Router } from '@koa/router';
import type { AppDeps, AppState } from '../context.ts';

/** Routes for time entries, periods, categories (issue 5). */
export function timeRoutes(_deps: AppDeps) {
  const r = new Router<AppState>();
  return r;
}
