import { Router } from '@koa/router';
import type { AppDeps, AppState } from '../context.ts';

/** Routes for parent, links, code-host references, viewers, visibility preview (issue 3). */
export function ticketRelationsRoutes(_deps: AppDeps) {
  const r = new Router<AppState>();
  return r;
}
