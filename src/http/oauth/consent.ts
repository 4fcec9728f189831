import type Koa from 'koa';
import type { Router } from '@koa/router';
import type Provider from 'oidc-provider';
import type { InteractionResults } from 'oidc-provider';
import { sessionPrincipal } from '../../core/auth/sessions.ts';
import { consentChoices, consentGrant } from '../../core/oauth/consent.ts';
import { knownScopes, OAUTH_SCOPES } from '../../core/oauth/scopes.ts';
import { makeCtx } from '../../core/ctx.ts';
import { toAppError } from '../../core/failures.ts';
import { runOp } from '../../core/operation.ts';
import type { Services } from '../../core/services.ts';
import { MCP_PATH } from '../../web/resource-metadata.ts';
import { checkPost, first, formOf, seeOther, sendPage, sessionOf, signInRoute } from './browser.ts';
import { consentPage, messagePage, pageCsp, signInPage } from './pages.ts';
import { CONSENT_PATH, type OAuthServer } from './provider.ts';

type Details = Awaited<ReturnType<Provider['interactionDetails']>>;

/** OpenID scopes a client may ask for beside ours; granted as asked (they add no access here). */
const OIDC_SCOPES = new Set(['openid', 'offline_access']);

const expired = () =>
  messagePage('This request has expired', 'This authorization request has expired or was opened in another browser. Start again from the application.');

async function detailsOf(provider: Provider, ctx: Koa.Context): Promise<Details | null> {
  try {
    const d = await provider.interactionDetails(ctx.req, ctx.res);
    return d.uid === ctx.params.uid ? d : null;
  } catch {
    return null;
  }
}

/** Ends the interaction and sends the browser on (to the client, or back into the authorization). */
async function finish(provider: Provider, ctx: Koa.Context, result: InteractionResults, merge: boolean): Promise<void> {
  const url = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: merge });
  seeOther(ctx, url);
}

const hostOf = (url: string) => {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
};

/**
 * The consent page (GET) and its decision (POST) for interaction `uid`. A signed-in person is
 * logged in to the authorization request at once (the API's session is the login); the page
 * then names the client, its URL's host and the redirect's host, the scopes asked (never more
 * than the person's role allows: a post asking more ends the request with invalid_scope), the
 * workspace and an optional project allow-list. Allowing records a grant per person and client,
 * backed by a delegated token (core/oauth/grants.ts).
 */
export function consentRoutes(router: Router, body: Koa.Middleware, services: Services, server: OAuthServer): void {
  signInRoute(router, body, services);

  router.get('/consent/:uid', async (ctx) => {
    const provider = await server.providerFor(ctx);
    const details = await detailsOf(provider, ctx);
    if (!details) return sendPage(ctx, expired(), 400);
    const session = await sessionOf(services, ctx);
    if (!session) return sendPage(ctx, signInPage(`${CONSENT_PATH}/${details.uid}`, null));
    if (details.prompt.name === 'login' || details.session?.accountId !== session.identityId) {
      return finish(provider, ctx, { login: { accountId: session.identityId } }, false);
    }
    const params = details.params as Record<string, string | undefined>;
    const requested = knownScopes(params.scope);
    if (!requested.length) {
      return finish(provider, ctx, { error: 'invalid_scope', error_description: `Ask for one or more of: ${OAUTH_SCOPES.join(', ')}.` }, false);
    }
    const client = await provider.Client.find(params.client_id ?? '');
    if (!client) return sendPage(ctx, expired(), 400);
    const choices = await consentChoices(services.sql, session);
    const isUrl = /^https:\/\//.test(client.clientId);
    ctx.set('Content-Security-Policy', pageCsp(params.redirect_uri));
    sendPage(
      ctx,
      consentPage({
        action: `${CONSENT_PATH}/${details.uid}`,
        csrf: session.csrfToken,
        personName: choices.personName,
        clientName: client.clientName ?? client.clientId,
        clientHost: isUrl ? hostOf(client.clientId) : null,
        clientId: client.clientId,
        redirectHost: hostOf(params.redirect_uri ?? ''),
        requested,
        workspaces: choices.workspaces,
      }),
    );
  });

  router.post('/consent/:uid', body, async (ctx) => {
    const provider = await server.providerFor(ctx);
    const session = await sessionOf(services, ctx);
    const form = formOf(ctx);
    if (!checkPost(ctx, session, form)) return;
    const details = await detailsOf(provider, ctx);
    if (!details) return sendPage(ctx, expired(), 400);
    if (!session || details.prompt.name !== 'consent' || details.session?.accountId !== session.identityId) {
      return seeOther(ctx, `${CONSENT_PATH}/${details.uid}`);
    }
    if (first(form, 'decision') !== 'allow') {
      return finish(provider, ctx, { error: 'access_denied', error_description: 'The person denied access.' }, true);
    }
    const params = details.params as Record<string, string | undefined>;
    const requested = knownScopes(params.scope);
    const chosen = form.scope ?? [];
    const principal = await sessionPrincipal(services.sql, session, first(form, 'workspace')).catch(() => null);
    if (!principal) return finish(provider, ctx, { error: 'access_denied', error_description: 'No such workspace of yours.' }, true);

    const clientId = params.client_id!;
    const client = await provider.Client.find(clientId);
    const resource = `${ctx.protocol}://${ctx.host}${MCP_PATH}`;
    const grant = new provider.Grant({ accountId: session.identityId, clientId });
    // the scopes are the resource's and, as the server also lists them (provider.ts), OpenID ones:
    // granted and refused in both, so the library asks no second consent for what was refused
    const refused = requested.filter((s) => !chosen.includes(s));
    grant.addResourceScope(resource, chosen.join(' '));
    const oidc = (params.scope ?? '').split(' ').filter((s) => OIDC_SCOPES.has(s));
    grant.addOIDCScope([...oidc, ...chosen].join(' '));
    if (refused.length) {
      grant.rejectResourceScope(resource, refused.join(' '));
      grant.rejectOIDCScope(refused.join(' '));
    }
    const grantId = await grant.save();
    try {
      await runOp(consentGrant, makeCtx(services, principal), {
        grantId,
        clientId,
        clientName: client?.clientName ?? clientId,
        requested,
        scopes: chosen,
        projectIds: form.project ?? [],
      });
    } catch (err) {
      const e = toAppError(err);
      if (!e || e.status >= 500) throw err;
      await grant.destroy();
      // the standard OAuth error for the client: more than the role allows is invalid_scope, the rest access_denied
      const error = e.reason === 'scope_not_allowed' ? 'invalid_scope' : 'access_denied';
      return finish(provider, ctx, { error, error_description: e.message }, true);
    }
    await finish(provider, ctx, { consent: { grantId } }, true);
  });
}
