import type Koa from 'koa';
import type { Router } from '@koa/router';
import { makeCtx } from '../../core/ctx.ts';
import { toAppError } from '../../core/failures.ts';
import { sessionPrincipal } from '../../core/auth/sessions.ts';
import { grantWorkspace, revokeOAuthGrant } from '../../core/oauth/consent.ts';
import { listGrants } from '../../core/oauth/grants.ts';
import { runOp } from '../../core/operation.ts';
import type { Services } from '../../core/services.ts';
import { checkPost, formOf, seeOther, sendPage, sessionOf } from './browser.ts';
import { grantsPage, messagePage, signInPage } from './pages.ts';

/** GET /oauth/grants: the applications a person allowed, with their last use; POST .../revoke ends one at once. */
export function grantRoutes(router: Router, body: Koa.Middleware, services: Services): void {
  router.get('/grants', async (ctx) => {
    const session = await sessionOf(services, ctx);
    if (!session) return sendPage(ctx, signInPage('/oauth/grants', null));
    const notice = ctx.query.revoked === '1' ? 'Access revoked: the application’s tokens no longer work.' : null;
    sendPage(ctx, grantsPage(await listGrants(services.sql, session.identityId), session.csrfToken, notice));
  });

  router.post('/grants/:id/revoke', body, async (ctx) => {
    const session = await sessionOf(services, ctx);
    const form = formOf(ctx);
    if (!checkPost(ctx, session, form)) return;
    if (!session) return sendPage(ctx, signInPage('/oauth/grants', null), 401);
    const slug = await grantWorkspace(services.sql, session.identityId, ctx.params.id!);
    const notYours = () => sendPage(ctx, messagePage('Not found', 'There is no such grant of yours.'), 404);
    if (!slug) return notYours();
    try {
      const principal = await sessionPrincipal(services.sql, session, slug);
      await runOp(revokeOAuthGrant, makeCtx(services, principal), { grantId: ctx.params.id! });
    } catch (err) {
      const e = toAppError(err);
      if (!e || e.status >= 500) throw err;
      return e.status === 404 ? notYours() : sendPage(ctx, messagePage('Refused', e.message), e.status);
    }
    seeOther(ctx, '/oauth/grants?revoked=1');
  });
}
