import { Router } from '@koa/router';
import type { AppDeps, AppState } from '../context.ts';

/** Routes for comments and attachments (issue 3). */
export function commentsRoutes(_deps: AppDeps) {
  const r = new Router<AppState>();
  return r;
}
