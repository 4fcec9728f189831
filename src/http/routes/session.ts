import { currentSession, login, loginInput, logout, reauthenticate, reauthInput, type SessionCtx } from '../../core/auth/sessions.ts';
import { unauthenticated } from '../../core/errors.ts';
import type { AppContext, AppDeps } from '../context.ts';
import { cookieSession, SESSION_COOKIE } from '../middleware/auth.ts';
import { defineRoute } from '../route-table.ts';
import { clockOf } from '../../core/ctx.ts';
import { reauthSchema, sessionInfoSchema } from '../../core/auth/schema.ts';
import { okSchema } from '../../core/response-schema.ts';

const secure = (deps: AppDeps, ctx: AppContext) => (deps.config.COOKIE_SECURE === 'auto' ? ctx.secure : deps.config.COOKIE_SECURE === 'true');
export const guardOf = (deps: AppDeps, ctx: AppContext) => (deps.loginGuard ? { guard: deps.loginGuard, address: ctx.ip } : undefined);

/** Sets the session cookie of a session just opened (login, an accepted invitation): HttpOnly, SameSite=Lax. */
export function setSessionCookie(deps: AppDeps, ctx: AppContext, secret: string, expiresAt: Date): void {
  ctx.cookies.set(SESSION_COOKIE, secret, { httpOnly: true, sameSite: 'lax', secure: secure(deps, ctx), expires: expiresAt, path: '/' });
}

/** The context of an operation on the caller's own session: the cookie's session (401 without one). */
async function sessionCtx(deps: AppDeps, ctx: AppContext): Promise<SessionCtx> {
  const session = await cookieSession(deps, ctx);
  if (!session) throw unauthenticated('Log in first.');
  return { sql: deps.sql, now: clockOf(deps), session, guard: guardOf(deps, ctx) };
}

/** Browser sessions (under /api/auth): login sets an HttpOnly cookie; reauth opens the ten-minute window; logout clears it. */
export const sessionRoutes = [
  defineRoute({
    method: 'POST',
    path: '/login',
    action: 'public',
    input: { body: loginInput },
    output: sessionInfoSchema,
    handler: async ({ ctx, deps }) => {
      const { secret, expiresAt, info } = await login(
        { sql: deps.sql, now: clockOf(deps), ttlHours: deps.config.SESSION_TTL_HOURS, guard: guardOf(deps, ctx) },
        ctx.request.body,
      );
      setSessionCookie(deps, ctx, secret, expiresAt);
      ctx.body = info;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/reauth',
    action: 'cookie',
    input: { body: reauthInput },
    output: reauthSchema,
    handler: async ({ ctx, deps }) => {
      ctx.body = await reauthenticate(await sessionCtx(deps, ctx), ctx.request.body);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/logout',
    action: 'public',
    input: {},
    output: okSchema,
    handler: async ({ ctx, deps }) => {
      const session = await cookieSession(deps, ctx);
      if (session) await logout({ sql: deps.sql, now: clockOf(deps), session });
      ctx.cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'lax', secure: secure(deps, ctx), expires: new Date(0), path: '/' });
      ctx.body = { ok: true };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/session',
    action: 'cookie',
    input: {},
    output: sessionInfoSchema,
    handler: async ({ ctx, deps }) => {
      ctx.body = await currentSession(await sessionCtx(deps, ctx));
    },
  }),
];
