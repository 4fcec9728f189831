import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Koa from 'koa';
import { Router } from '@koa/router';
import { koaBody } from 'koa-body';
import { authorize, can } from '../core/access/authorize.ts';
import type { Principal } from '../core/auth/principal.ts';
import { clockOf, makeCtx, type Ctx } from '../core/ctx.ts';
import { conflict } from '../core/errors.ts';
import { toAppError } from '../core/failures.ts';
import { runOp, runPublicOp } from '../core/operation.ts';
import { opsPrincipal } from '../core/ops/principal.ts';
import type { Services } from '../core/services.ts';
import { checkCsrf, guardOf, readSession, reauthSession, sameOriginPost, setSessionCookie, signIn, signOut } from '../web/session.ts';
import { crontabItems } from './crontab.ts';
import { uploadBody } from './upload.ts';
import { html } from './html.ts';
import { layout } from './layout.ts';
import { consoleRoutes } from './pages/index.ts';
import { joinPage, linkGonePage, resetPage } from './pages/links.ts';
import { loginPage } from './pages/login.ts';
import { acceptInvitation, previewInvitation } from '../core/auth/invitation-accept.ts';
import { resetPassword } from '../core/auth/password-reset.ts';
import { safeNext, withMessage, type Answer, type ConsoleAction, type ConsoleOptions, type Handler, type OpsRequest, type OpsRoute } from './route.ts';

const STATIC = Object.fromEntries(['ops.css', 'ops.js'].map((f) => [f, readFileSync(join(import.meta.dirname, 'static', f))])) as Record<string, Buffer>;

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const flat = (o: unknown): Record<string, string> =>
  Object.fromEntries(Object.entries((o ?? {}) as Record<string, unknown>).map(([k, v]) => [k, Array.isArray(v) ? String(v[0]) : String(v ?? '')]));

/** Whether the operation's action would let the caller through now (the refusal itself is the operation's, audited). */
function allows(ctx: Ctx, op: ConsoleAction['op']): boolean {
  try {
    authorize(ctx, op.action);
    return true;
  } catch {
    return false;
  }
}

/**
 * The one dispatcher of console actions: what the form asks before the operation (the password
 * re-authenticates the session; the typed word, asked only of a caller the operation would let
 * through), then the operation through `runOp` with the input the action builds, then its answer.
 */
async function dispatch(action: ConsoleAction, r: OpsRequest): Promise<Answer> {
  if (action.reauth && r.body.password) await r.reauth(r.body.password);
  const c = action.confirm;
  if (c && (r.body[c.field] ?? '').trim() !== c.word && allows(r.ctx, action.op)) throw conflict('confirmation_mismatch', undefined, c.message);
  return action.answer(await runOp(action.op, r.ctx, action.sent(r)), r);
}

/** A route's handler: a page renders, an action dispatches its operation. */
const handlerOf = (route: OpsRoute): Handler => ('op' in route ? (r) => dispatch(route, r) : route.page);

function errorPage(status: number, title: string, message: string, principal?: Principal | null): string {
  return layout(
    { title, principal },
    html`<p>${message}</p>
      <p><a href="/ops">Back to the console</a></p>`,
  );
}

/**
 * The operators' console (issue 13) under /ops: server-rendered pages over the core's operations,
 * a browser session (the same login and cookie as the API), a CSRF token in every form. Every
 * other path passes through untouched.
 */
export function opsConsole(services: Services, options: ConsoleOptions): Koa.Middleware {
  // what the console's operations read beyond the database: the crontab (parsed once, here at the edge) and the outbox folder
  const machinery = { crontab: crontabItems(options.crontab), outboxDir: options.outboxDir };
  const ctxOf = (principal: Principal) => ({ ...makeCtx(services, principal), ...machinery });
  const router = new Router({ prefix: '/ops' });
  const body = koaBody({ urlencoded: true, json: false, text: false, multipart: false, formLimit: '64kb' });

  const send = (ctx: Koa.Context, a: Answer) => {
    if ('redirect' in a) {
      ctx.status = 303;
      // every redirect stays in the console, whatever built its path (a form's _back, a referer)
      ctx.redirect(safeNext(a.redirect, '/ops'));
      return;
    }
    ctx.status = a.status ?? 200;
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = a.page;
  };

  router.get('/static/:file', (ctx) => {
    const file = STATIC[ctx.params.file ?? ''];
    if (!file) return;
    ctx.type = ctx.params.file!.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = file;
  });
  router.get('/login', (ctx) => send(ctx, { page: loginPage(safeNext(ctx.query.next), null) }));
  router.post('/login', body, async (ctx) => {
    const form = flat(ctx.request.body);
    if (!sameOriginPost(ctx)) {
      return send(ctx, { page: errorPage(403, 'Refused', 'This sign-in form was sent from another site. Open the console and sign in there.'), status: 403 });
    }
    try {
      await signIn(services, ctx, { email: form.email, password: form.password });
      send(ctx, { redirect: safeNext(form.next) });
    } catch (err) {
      const e = toAppError(err);
      if (!e) throw err;
      const message = e.code === 'rate_limited' ? 'Too many attempts; wait a moment and try again.' : 'The email or password is wrong.';
      send(ctx, { page: loginPage(safeNext(form.next), message), status: e.status });
    }
  });

  // the links of emails (issue 22), signed out like the sign-in form: the link's secret is the credential
  const linkCtx = (ctx: Koa.Context) => ({
    sql: services.sql,
    now: clockOf(services),
    ttlHours: services.config.SESSION_TTL_HOURS,
    guard: guardOf(services, ctx),
  });
  const refusedForm = () => errorPage(403, 'Refused', 'This form was sent from another site. Open the link from your email again.');
  /** The page again with the core's message, or the gone page for a link that no longer works. */
  const linkFailed = (ctx: Koa.Context, err: unknown, what: 'invitation' | 'reset', again: (message: string) => Promise<string> | string) => {
    const e = toAppError(err);
    if (!e) throw err;
    if (e.status === 404) return send(ctx, { page: linkGonePage(what), status: 404 });
    return Promise.resolve(again(e.message)).then((page) => send(ctx, { page, status: e.status }));
  };
  router.get('/join/:token', async (ctx) => {
    const token = ctx.params.token ?? '';
    try {
      send(ctx, { page: joinPage(token, await runPublicOp(previewInvitation, linkCtx(ctx), { token }), null) });
    } catch (err) {
      await linkFailed(ctx, err, 'invitation', () => '');
    }
  });
  router.post('/join/:token', body, async (ctx) => {
    const token = ctx.params.token ?? '';
    if (!sameOriginPost(ctx)) return send(ctx, { page: refusedForm(), status: 403 });
    try {
      const opened = await runPublicOp(acceptInvitation, linkCtx(ctx), { token, password: flat(ctx.request.body).password });
      setSessionCookie(services, ctx, opened.secret, opened.expiresAt);
      send(ctx, { redirect: '/ops' });
    } catch (err) {
      await linkFailed(ctx, err, 'invitation', async (message) => joinPage(token, await runPublicOp(previewInvitation, linkCtx(ctx), { token }), message));
    }
  });
  router.get('/reset/:token', (ctx) => send(ctx, { page: resetPage(ctx.params.token ?? '', null) }));
  router.post('/reset/:token', body, async (ctx) => {
    const token = ctx.params.token ?? '';
    if (!sameOriginPost(ctx)) return send(ctx, { page: refusedForm(), status: 403 });
    try {
      await runPublicOp(resetPassword, linkCtx(ctx), { token, password: flat(ctx.request.body).password });
      send(ctx, { redirect: '/ops/login' });
    } catch (err) {
      await linkFailed(ctx, err, 'reset', (message) => resetPage(token, message));
    }
  });

  /** Signed in, CSRF checked on posts, the workspace's principal, `ops.read` allowed: or the answer that says why not. */
  const guarded = (handler: Handler) => async (ctx: Koa.Context) => {
    const session = await readSession(services, ctx);
    if (!session) return send(ctx, { redirect: `/ops/login?next=${encodeURIComponent(ctx.originalUrl)}` });
    const form = flat(ctx.request.body);
    if (ctx.method === 'POST') {
      try {
        checkCsrf(ctx, session, form._csrf);
      } catch {
        return send(ctx, {
          page: errorPage(403, 'Refused', 'This form was not sent with your session’s security token. Reload the page and try again.'),
          status: 403,
        });
      }
    }
    const principal = await opsPrincipal(services.sql, session, typeof ctx.query.w === 'string' ? ctx.query.w : null);
    if (!principal || can(principal, 'ops.read')) {
      return send(ctx, {
        page: errorPage(403, 'Not for you', 'The operations console is for owners, admins and billing operators of a workspace.', principal),
        status: 403,
      });
    }
    const r: OpsRequest = {
      ctx: ctxOf(principal),
      principal,
      csrf: session.csrfToken,
      canAct: can(principal, 'ops.act') === null,
      query: flat(ctx.query),
      body: form,
      params: flat(ctx.params),
      path: ctx.path,
      reauth: async (password) => {
        const at = await reauthSession(services, ctx, session, password);
        r.ctx = ctxOf({ ...principal, reauthAt: new Date(at.reauthAt) });
      },
    };
    try {
      send(ctx, await handler(r));
    } catch (err) {
      const e = toAppError(err);
      if (!e) {
        services.log.error({ err, requestId: ctx.state.requestId, path: ctx.path }, 'ops: unhandled error');
        const quote = `Something went wrong. Quote request id ${String(ctx.state.requestId)} when reporting it.`;
        return send(ctx, { page: errorPage(500, 'Error', quote, principal), status: 500 });
      }
      // a refusal the operator can fix in the page (re-authenticate) goes back to it with the message
      if (ctx.method === 'POST' && e.status < 500 && (e.code !== 'forbidden' || e.details?.reason === 'reauth_required')) {
        const back = safeNext(form._back || ctx.get('referer').replace(/^https?:\/\/[^/]+/, ''));
        return send(ctx, { redirect: withMessage(back, 'err', e.message) });
      }
      send(ctx, { page: errorPage(e.status, e.status === 403 ? 'Refused' : e.status === 404 ? 'Not found' : 'Error', e.message, principal), status: e.status });
    }
  };

  router.get(
    '/',
    guarded(() => Promise.resolve({ redirect: '/ops/jobs' })),
  );
  router.post('/logout', body, async (ctx) => {
    const session = await readSession(services, ctx);
    if (session) checkCsrf(ctx, session, flat(ctx.request.body)._csrf);
    await signOut(services, ctx, session);
    send(ctx, { redirect: '/ops/login' });
  });
  for (const route of consoleRoutes) {
    if (route.method === 'GET') router.get(route.path, guarded(handlerOf(route)));
    else router.post(route.path, route.upload ? uploadBody(route.upload.field) : body, guarded(handlerOf(route)));
  }

  const routes = router.routes();
  return async (ctx, next) => {
    if (ctx.path !== '/ops' && !ctx.path.startsWith('/ops/')) return next();
    ctx.set('Content-Security-Policy', CSP);
    await routes(ctx as never, async () => {});
    if (ctx.body === undefined && ctx.status === 404) {
      send(ctx, { page: errorPage(404, 'Not found', 'There is no such page in the console.'), status: 404 });
    }
  };
}
