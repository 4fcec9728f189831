import { Router } from '@koa/router';
import { currentSession, login, logout, reauthenticate } from '../../core/auth/sessions.ts';
import { unauthenticated } from '../../core/errors.ts';
import type { AppContext, AppDeps, AppState } from '../context.ts';
import { cookieSession, SESSION_COOKIE } from '../middleware/auth.ts';

/** Browser sessions: login sets an HttpOnly cookie; reauth opens the ten-minute window; logout clears it. */
export function sessionRoutes(deps: AppDeps) {
  const r = new Router<AppState>({ prefix: '/api/auth' });
  const now = () => (deps.now ?? (() => new Date()))();
  const secure = (ctx: AppContext) => (deps.config.COOKIE_SECURE === 'auto' ? ctx.secure : deps.config.COOKIE_SECURE === 'true');
  const requireSession = async (ctx: AppContext) => {
    const s = await cookieSession(deps, ctx);
    if (!s) throw unauthenticated('Log in first.');
    return s;
  };

  const guardOf = (ctx: AppContext) => (deps.loginGuard ? { guard: deps.loginGuard, address: ctx.ip } : undefined);

  r.post('/login', async (ctx) => {
    const { secret, expiresAt, info } = await login({ sql: deps.sql, now, ttlHours: deps.config.SESSION_TTL_HOURS, guard: guardOf(ctx) }, ctx.request.body);
    ctx.cookies.set(SESSION_COOKIE, secret, { httpOnly: true, sameSite: 'lax', secure: secure(ctx), expires: expiresAt, path: '/' });
    ctx.body = info;
  });
  r.post('/reauth', async (ctx) => {
    ctx.body = await reauthenticate(deps.sql, await requireSession(ctx), ctx.request.body, now(), guardOf(ctx));
  });
  r.post('/logout', async (ctx) => {
    const s = await cookieSession(deps, ctx);
    if (s) await logout(deps.sql, s);
    ctx.cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'lax', secure: secure(ctx), expires: new Date(0), path: '/' });
    ctx.body = { ok: true };
  });
  r.get('/session', async (ctx) => {
    ctx.body = await currentSession(deps.sql, await requireSession(ctx));
  });
  return r;
}
