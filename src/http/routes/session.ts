import { currentSession, login, loginInput, reauthenticate, reauthInput, type SessionCtx } from '../../core/auth/sessions.ts';
import { unauthenticated } from '../../core/errors.ts';
import { sessionCtxOf, signIn, signOut } from '../../web/session.ts';
import type { AppContext, AppDeps } from '../context.ts';
import { cookieSession } from '../middleware/auth.ts';
import { defineRoute } from '../route-table.ts';
import { reauthSchema, sessionInfoSchema } from '../../core/auth/schema.ts';
import { okSchema } from '../../core/response-schema.ts';
import { runPublicOp } from '../../core/operation.ts';

// the cookie and the login throttle are the shared web layer's (src/web/session.ts), here for the invitation routes
export { guardOf, setSessionCookie } from '../../web/session.ts';

/** The context of an operation on the caller's own session: the cookie's session (401 without one). */
async function sessionCtx(deps: AppDeps, ctx: AppContext): Promise<SessionCtx> {
  const session = await cookieSession(deps, ctx);
  if (!session) throw unauthenticated('Log in first.');
  return sessionCtxOf(deps, ctx, session);
}

/** Browser sessions (under /api/auth): login sets an HttpOnly cookie; reauth opens the ten-minute window; logout clears it. */
export const sessionRoutes = [
  defineRoute({
    method: 'POST',
    path: '/login',
    action: 'public',
    publicOp: login,
    input: { body: loginInput },
    output: sessionInfoSchema,
    handler: async ({ ctx, deps }) => {
      ctx.body = (await signIn(deps, ctx, ctx.request.body)).info;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/reauth',
    action: 'cookie',
    publicOp: reauthenticate,
    input: { body: reauthInput },
    output: reauthSchema,
    handler: async ({ ctx, deps }) => {
      ctx.body = await runPublicOp(reauthenticate, await sessionCtx(deps, ctx), ctx.request.body);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/logout',
    action: 'public',
    input: {},
    output: okSchema,
    handler: async ({ ctx, deps }) => {
      await signOut(deps, ctx, await cookieSession(deps, ctx));
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
