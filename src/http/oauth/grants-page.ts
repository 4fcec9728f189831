import type Koa from 'koa';
import type { Router } from '@koa/router';
import { clockOf } from '../../core/ctx.ts';
import { toAppError } from '../../core/failures.ts';
import { listGrants, revokeGrant } from '../../core/oauth/grants.ts';
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
    try {
      await revokeGrant(services.sql, session.identityId, ctx.params.id!, clockOf(services)());
    } catch (err) {
      if (toAppError(err)?.code !== 'not_found') throw err;
      return sendPage(ctx, messagePage('Not found', 'There is no such grant of yours.'), 404);
    }
    seeOther(ctx, '/oauth/grants?revoked=1');
  });
}
