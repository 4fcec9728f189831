import { Router } from '@koa/router';
import type { AppDeps, AppState } from '../context.ts';

/** Routes for the board and "my work" (issue 4). */
export function boardRoutes(_deps: AppDeps) {
  const r = new Router<AppState>();
  return r;
}
