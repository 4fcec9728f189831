import { currentSession, login, loginInput, logout, reauthenticate, reauthInput } from '../../core/auth/sessions.ts';
import { unauthenticated } from '../../core/errors.ts';
import type { AppContext, AppDeps } from '../context.ts';
import { cookieSession, SESSION_COOKIE } from '../middleware/auth.ts';
import { defineRoute } from '../route-table.ts';
import { clockOf } from '../../core/services.ts';

const now = (deps: AppDeps) => clockOf(deps)();
const secure = (deps: AppDeps, ctx: AppContext) => (deps.config.COOKIE_SECURE === 'auto' ? ctx.secure : deps.config.COOKIE_SECURE === 'true');
const guardOf = (deps: AppDeps, ctx: AppContext) => (deps.loginGuard ? { guard: deps.loginGuard, address: ctx.ip } : undefined);

async function requireSession(deps: AppDeps, ctx: AppContext) {
  const s = await cookieSession(deps, ctx);
  if (!s) throw unauthenticated('Log in first.');
  return s;
}

/** Browser sessions (under /api/auth): login sets an HttpOnly cookie; reauth opens the ten-minute window; logout clears it. */
export const sessionRoutes = [
  defineRoute({
    method: 'POST',
    path: '/login',
    action: 'public',
    input: { body: loginInput },
    output: null,
    handler: async ({ ctx, deps }) => {
      const { secret, expiresAt, info } = await login(
        { sql: deps.sql, now: () => now(deps), ttlHours: deps.config.SESSION_TTL_HOURS, guard: guardOf(deps, ctx) },
        ctx.request.body,
      );
      ctx.cookies.set(SESSION_COOKIE, secret, { httpOnly: true, sameSite: 'lax', secure: secure(deps, ctx), expires: expiresAt, path: '/' });
      ctx.body = info;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/reauth',
    action: 'cookie',
    input: { body: reauthInput },
    output: null,
    handler: async ({ ctx, deps }) => {
      ctx.body = await reauthenticate(deps.sql, await requireSession(deps, ctx), ctx.request.body, now(deps), guardOf(deps, ctx));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/logout',
    action: 'public',
    input: {},
    output: null,
    handler: async ({ ctx, deps }) => {
      const s = await cookieSession(deps, ctx);
      if (s) await logout(deps.sql, s);
      ctx.cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'lax', secure: secure(deps, ctx), expires: new Date(0), path: '/' });
      ctx.body = { ok: true };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/session',
    action: 'cookie',
    input: {},
    output: null,
    handler: async ({ ctx, deps }) => {
      ctx.body = await currentSession(deps.sql, await requireSession(deps, ctx));
    },
  }),
];
