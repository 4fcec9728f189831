import type Koa from 'koa';
import { assertCsrf } from '../core/auth/csrf.ts';
import { isSameOriginPost } from '../core/auth/origin.ts';
import { findSession, login, logout, reauthenticate, type LoginCtx, type Session, type SessionCtx } from '../core/auth/sessions.ts';
import { clockOf } from '../core/ctx.ts';
import { runPublicOp, type PublicOperationResult } from '../core/operation.ts';
import type { Services } from '../core/services.ts';

/**
 * The browser session as HTTP carries it, for both Koa adapters (the REST API in src/http, the
 * console in src/ops): one cookie, one way to sign in and out, the CSRF and same-origin checks,
 * and where a redirect may lead. The rules stay in the core (src/core/auth: sessions, the CSRF
 * token, what a same-origin post is); this file only reads and writes headers and cookies.
 */

/** The session cookie: one session for the API and the console. */
export const SESSION_COOKIE = 'wt_session';

/** What the session's HTTP handling reads of the process. */
export type WebDeps = Pick<Services, 'sql' | 'config' | 'loginGuard' | 'now'>;

/** `Secure` on the cookie: as configured, or (auto) when this request came over HTTPS. */
const secure = (deps: WebDeps, ctx: Koa.Context) => (deps.config.COOKIE_SECURE === 'auto' ? ctx.secure : deps.config.COOKIE_SECURE === 'true');

/** The login throttle with this request's address, when the process has one. */
export const guardOf = (deps: WebDeps, ctx: Koa.Context) => (deps.loginGuard ? { guard: deps.loginGuard, address: ctx.ip } : undefined);

/** Sets the cookie of a session just opened (a login, an accepted invitation): HttpOnly, SameSite=Lax. */
export function setSessionCookie(deps: WebDeps, ctx: Koa.Context, secret: string, expiresAt: Date): void {
  ctx.cookies.set(SESSION_COOKIE, secret, { httpOnly: true, sameSite: 'lax', secure: secure(deps, ctx), expires: expiresAt, path: '/' });
}

/** Clears the session cookie (logout). */
export function clearSessionCookie(deps: WebDeps, ctx: Koa.Context): void {
  ctx.cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'lax', secure: secure(deps, ctx), expires: new Date(0), path: '/' });
}

/** The cookie's session, if it is a live one. No CSRF check: see `checkCsrf`. */
export async function readSession(deps: WebDeps, ctx: Koa.Context): Promise<Session | null> {
  const secret = ctx.cookies.get(SESSION_COOKIE);
  return secret ? findSession(deps.sql, secret, clockOf(deps)()) : null;
}

/**
 * A cookie-authenticated write carries the session's CSRF token: a form's field (`formToken`)
 * or the X-CSRF-Token header (the core's rule, 403 `csrf`).
 */
export function checkCsrf(ctx: Koa.Context, session: Session, formToken?: string): void {
  assertCsrf(session, ctx.method, formToken || ctx.get('x-csrf-token'));
}

/** Whether a form post came from this site's own page (the core's rule over Sec-Fetch-Site, Origin and Host). */
export const sameOriginPost = (ctx: Koa.Context): boolean =>
  isSameOriginPost({ host: ctx.host, origin: ctx.get('origin'), secFetchSite: ctx.get('sec-fetch-site') });

/** The context of an operation on the caller's own session (re-authentication, logout). */
export const sessionCtxOf = (deps: WebDeps, ctx: Koa.Context, session: Session): SessionCtx => ({
  sql: deps.sql,
  now: clockOf(deps),
  session,
  guard: guardOf(deps, ctx),
});

/** Signs in with email and password (the core's login, throttled) and sets the cookie; answers what the login returned. */
export async function signIn(deps: WebDeps, ctx: Koa.Context, credentials: unknown): Promise<PublicOperationResult<typeof login>> {
  const loginCtx: LoginCtx = { sql: deps.sql, now: clockOf(deps), ttlHours: deps.config.SESSION_TTL_HOURS, guard: guardOf(deps, ctx) };
  const opened = await runPublicOp(login, loginCtx, credentials);
  setSessionCookie(deps, ctx, opened.secret, opened.expiresAt);
  return opened;
}

/** Ends the session, if there is one, and clears the cookie either way. */
export async function signOut(deps: WebDeps, ctx: Koa.Context, session: Session | null): Promise<void> {
  if (session) await logout(sessionCtxOf(deps, ctx, session));
  clearSessionCookie(deps, ctx);
}

/** Re-authenticates the session with the password (the ten-minute window); answers when. */
export const reauthSession = (deps: WebDeps, ctx: Koa.Context, session: Session, password: unknown) =>
  runPublicOp(reauthenticate, sessionCtxOf(deps, ctx, session), { password });

/**
 * Where a redirect may lead: a path of this site inside `area` (a path prefix: `/ops`), never
 * another site (`//host`, a backslash, a scheme, whitespace); else `fallback`. Every redirect of
 * the console goes through it, whatever built the path.
 */
export function safeNext(v: unknown, area: string, fallback: string): string {
  if (typeof v !== 'string' || v.startsWith('//') || /[\s\\]/.test(v)) return fallback;
  return v === area || v.startsWith(`${area}/`) || v.startsWith(`${area}?`) ? v : fallback;
}
