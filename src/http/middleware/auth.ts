import type { Next } from 'koa';
import { requireScope, requireSession } from '../../core/auth/guards.ts';
import { findSession, sessionPrincipal, type Session } from '../../core/auth/sessions.ts';
import { forbidden, unauthenticated } from '../../core/errors.ts';
import { requestKindOf } from '../../core/limits/token-limits.ts';
import type { AppContext, AppDeps } from '../context.ts';
import { idempotent, wantsIdempotency } from './idempotency.ts';

export const SESSION_COOKIE = 'wt_session';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Reads the session cookie; a cookie-authenticated write must carry the session's CSRF token. */
export async function cookieSession(deps: AppDeps, ctx: AppContext): Promise<Session | null> {
  const secret = ctx.cookies.get(SESSION_COOKIE);
  if (!secret) return null;
  const session = await findSession(deps.sql, secret, (deps.now ?? (() => new Date()))());
  if (!session) return null;
  if (!SAFE_METHODS.has(ctx.method) && ctx.get('x-csrf-token') !== session.csrfToken) {
    throw forbidden('csrf', undefined, 'A cookie-authenticated write needs the X-CSRF-Token header.');
  }
  return session;
}

export type Access = 'read' | 'write' | 'session';

/**
 * Authenticates a workspace route (`/api/w/:slug/...`): a Bearer token, else a session
 * cookie. `access` is what the route needs: a token scope, or a browser session.
 * A token request is counted against the token's rate limit (its RateLimit headers go on the
 * response, errors included), and a token POST with `Idempotency-Key` runs at most once.
 */
export function authenticate(deps: AppDeps, access: Access) {
  return async (ctx: AppContext, next: Next) => {
    const slug = ctx.params.slug ?? '';
    const header = ctx.get('authorization');
    const now = (deps.now ?? (() => new Date()))();
    if (header) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!m) throw unauthenticated('Send Authorization: Bearer <token>.');
      ctx.state.principal = await deps.verifier.verify(m[1]!, slug, now);
      if (deps.limits) ctx.set(await deps.limits.consume(ctx.state.principal.tokenId!, requestKindOf(ctx.method)));
    } else {
      const session = await cookieSession(deps, ctx);
      if (!session) throw unauthenticated();
      ctx.state.session = session;
      ctx.state.principal = await sessionPrincipal(deps.sql, session, slug);
    }
    if (access === 'session') requireSession(ctx.state.principal);
    else requireScope(ctx.state.principal, access);
    if (wantsIdempotency(ctx)) await idempotent(deps, ctx, next);
    else await next();
  };
}
