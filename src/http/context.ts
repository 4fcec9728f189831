import type { Router, RouterContext } from '@koa/router';
import type { Principal } from '../core/auth/principal.ts';
import type { Session } from '../core/auth/sessions.ts';
import { makeCtx, type Ctx } from '../core/ctx.ts';
import type { Services } from '../core/services.ts';
import type { Db } from '../db/connect.ts';

/** What the HTTP layer needs from the process: the services every adapter shares. */
export type AppDeps = Services;

export interface AppState {
  requestId: string;
  principal?: Principal;
  session?: Session;
  /** The transaction an idempotent request runs in; core operations join it. */
  tx?: Db;
}

export type AppContext = RouterContext<AppState>;
export type AppRouter = Router<AppState>;

/** The core context for this request: the request's principal, the pool, the clock. */
export function coreCtx(deps: AppDeps, ctx: AppContext): Ctx {
  const principal = ctx.state.principal;
  if (!principal) throw new Error('coreCtx called before authentication');
  return makeCtx(deps, principal, ctx.state.tx);
}
