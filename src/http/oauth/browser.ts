import type Koa from 'koa';
import type { Router } from '@koa/router';
import { assertCsrf } from '../../core/auth/csrf.ts';
import { isSameOriginPost } from '../../core/auth/origin.ts';
import { findSession, login, type Session } from '../../core/auth/sessions.ts';
import { clockOf } from '../../core/ctx.ts';
import { runPublicOp } from '../../core/operation.ts';
import { toAppError } from '../../core/failures.ts';
import type { Services } from '../../core/services.ts';
import { SESSION_COOKIE } from '../middleware/auth.ts';
import { messagePage, signInPage } from './pages.ts';

/** What the OAuth pages share with a browser: the API's session cookie, form posts, CSRF, sign-in. */

export function sendPage(ctx: Koa.Context, page: string, status = 200): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = page;
}

export function seeOther(ctx: Koa.Context, url: string): void {
  ctx.status = 303;
  ctx.redirect(url);
}

/** Form fields; a repeated field (checkboxes) as a list. */
export function formOf(ctx: Koa.Context): Record<string, string[]> {
  const raw = (ctx.request.body ?? {}) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, (Array.isArray(v) ? v : [v]).map((x) => String(x ?? ''))]));
}

export const first = (form: Record<string, string[]>, name: string) => form[name]?.[0] ?? '';

export async function sessionOf(services: Services, ctx: Koa.Context): Promise<Session | null> {
  const secret = ctx.cookies.get(SESSION_COOKIE);
  return secret ? findSession(services.sql, secret, clockOf(services)()) : null;
}

/**
 * A form post from this site's own page (no login CSRF, no cross-site consent) carrying the
 * session's CSRF token; otherwise answers 403 and returns false.
 */
export function checkPost(ctx: Koa.Context, session: Session | null, form: Record<string, string[]>): boolean {
  if (!isSameOriginPost({ host: ctx.host, origin: ctx.get('origin'), secFetchSite: ctx.get('sec-fetch-site') })) {
    sendPage(ctx, messagePage('Refused', 'This form was sent from another site.'), 403);
    return false;
  }
  if (!session) return true;
  try {
    assertCsrf(session, 'POST', first(form, '_csrf'));
    return true;
  } catch {
    sendPage(ctx, messagePage('Refused', 'This form was not sent with your session’s security token. Reload the page and try again.'), 403);
    return false;
  }
}

/** Only a path of these pages: never another site. */
const safeNext = (v: string) => (/^\/oauth\/(consent\/[A-Za-z0-9_-]+|grants)$/.test(v) ? v : '/oauth/grants');

/** POST /oauth/login: the API's password login (same throttle, same cookie), then back to the page that asked. */
export function signInRoute(router: Router, body: Koa.Middleware, services: Services): void {
  router.post('/login', body, async (ctx) => {
    const form = formOf(ctx);
    if (!checkPost(ctx, null, form)) return;
    const next = safeNext(first(form, 'next'));
    try {
      const { secret, expiresAt } = await runPublicOp(
        login,
        {
          sql: services.sql,
          now: clockOf(services),
          ttlHours: services.config.SESSION_TTL_HOURS,
          guard: services.loginGuard ? { guard: services.loginGuard, address: ctx.ip } : undefined,
        },
        { email: first(form, 'email'), password: first(form, 'password') },
      );
      const secure = services.config.COOKIE_SECURE === 'auto' ? ctx.secure : services.config.COOKIE_SECURE === 'true';
      ctx.cookies.set(SESSION_COOKIE, secret, { httpOnly: true, sameSite: 'lax', secure, expires: expiresAt, path: '/' });
      seeOther(ctx, next);
    } catch (err) {
      const e = toAppError(err);
      if (!e) throw err;
      const message = e.code === 'rate_limited' ? 'Too many attempts; wait a moment and try again.' : 'The email or password is wrong.';
      sendPage(ctx, signInPage(next, message), e.status);
    }
  });
}
