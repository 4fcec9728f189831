import type { Router, RouterContext } from '@koa/router';
import type { Principal } from '../core/auth/principal.ts';
import type { TokenVerifier } from '../core/auth/tokens.ts';
import type { Session } from '../core/auth/sessions.ts';
import type { Ctx } from '../core/ctx.ts';
import type { Caches } from '../core/cache.ts';
import type { LoginGuard } from '../core/auth/login-guard.ts';
import type { TokenLimits } from '../core/limits/token-limits.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/connect.ts';
import type { Logger } from '../log.ts';

/** What the HTTP layer needs from the process: built once in main and in tests. */
export interface AppDeps {
  sql: Db;
  config: Config;
  log: Logger;
  verifier: TokenVerifier;
  caches?: Caches;
  /** Failed-login throttling; absent: no throttling (one-off tools). */
  loginGuard?: LoginGuard;
  /** Requests per token and minute; absent: not limited (one-off tools). */
  limits?: TokenLimits;
  now?: () => Date;
}

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
  const tx = ctx.state.tx;
  return { sql: tx ?? deps.sql, ...(tx ? { inTx: true } : {}), principal, now: deps.now ?? (() => new Date()), caches: deps.caches };
}
