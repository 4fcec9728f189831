import type { Next } from 'koa';
import { sessionPrincipal, type Session } from '../../core/auth/sessions.ts';
import { bearerSecret } from '../../core/auth/token-verifier.ts';
import { unauthenticated } from '../../core/errors.ts';
import { requestKindOf } from '../../core/limits/token-limits.ts';
import type { AppContext, AppDeps } from '../context.ts';
import { idempotent, wantsIdempotency } from './idempotency.ts';
import { clockOf } from '../../core/ctx.ts';
import { checkCsrf, readSession } from '../../web/session.ts';

export { SESSION_COOKIE } from '../../web/session.ts';

/** Reads the session cookie (src/web); a cookie-authenticated write must carry the session's CSRF token (X-CSRF-Token). */
export async function cookieSession(deps: AppDeps, ctx: AppContext): Promise<Session | null> {
  const session = await readSession(deps, ctx);
  if (session) checkCsrf(ctx, session);
  return session;
}

/**
 * Authenticates a workspace route (`/api/w/:slug/...`): a Bearer token, else a session
 * cookie. It only identifies the caller; what the caller may do (token scope, browser session,
 * role) is decided by the core operation (src/core/access/authorize.ts).
 * A token request is counted against the token's rate limit (its RateLimit headers go on the
 * response, errors included), and a token POST with `Idempotency-Key` runs at most once.
 */
export function authenticate(deps: AppDeps) {
  return async (ctx: AppContext, next: Next) => {
    const slug = ctx.params.slug ?? '';
    const header = ctx.get('authorization');
    const now = clockOf(deps)();
    if (header) {
      ctx.state.principal = await deps.verifier.verify(bearerSecret(header), slug, now);
      if (deps.limits) ctx.set(await deps.limits.consume(ctx.state.principal.tokenId!, requestKindOf(ctx.method)));
    } else {
      const session = await cookieSession(deps, ctx);
      if (!session) throw unauthenticated();
      ctx.state.session = session;
      ctx.state.principal = await sessionPrincipal(deps.sql, session, slug);
    }
    if (wantsIdempotency(ctx)) await idempotent(deps, ctx, next);
    else await next();
  };
}
