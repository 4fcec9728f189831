import type Koa from 'koa';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import type Provider from 'oidc-provider';
import type { Db } from '../../db/connect.ts';
import { liveGrantFor } from '../../core/oauth/grants.ts';
import type { ServerKeys } from '../../core/oauth/keys.ts';
import { OAuthRecords } from '../../core/oauth/records.ts';
import { OAUTH_SCOPES } from '../../core/oauth/scopes.ts';
import { MCP_PATH } from '../../web/resource-metadata.ts';
import { html } from '../../core/html.ts';
import type { FetchLike } from './guarded-fetch.ts';

/**
 * The authorization server (issue 24) is oidc-provider, configured for what MCP clients need and
 * nothing else: authorization code + PKCE (S256) only, refresh tokens rotated on every use (a
 * replayed one revokes its grant, as does a reused code: the library's rules), one resource, this
 * server's /mcp (RFC 8707; any other resource indicator is invalid_target), opaque tokens stored
 * as hashes (core/oauth/records.ts), client ID metadata documents fetched through the outbound
 * guard, open dynamic registration (RFC 7591), revocation (RFC 7009). No OpenID Connect: no
 * userinfo, no logout endpoint, no ID tokens are ever asked for (scopes are read/write/triage).
 */

/** Where the server's endpoints live (the consent page is ours: consent.ts). */
export const OAUTH_PREFIX = '/oauth';
export const CONSENT_PATH = `${OAUTH_PREFIX}/consent`;

export interface ProviderSettings {
  sql: Db;
  now: () => Date;
  /** This server as the client reached it (`http://127.0.0.1:3000`): the issuer, and its /mcp the one resource. */
  origin: string;
  keys: ServerKeys;
  fetch: FetchLike;
  accessTokenSeconds: number;
  refreshTokenDays: number;
}

/** What the pages need of the server: the provider answering for this request's origin (built on first use, one per allowed origin). */
export interface OAuthServer {
  providerFor: (ctx: Koa.Context) => Promise<Provider>;
}

const DAY = 24 * 3600;

/** oidc-provider's error page for a request that cannot go back to a client (an unknown client, a bad redirect_uri). */
function renderError(ctx: KoaContextWithOIDC, out: { error: string; error_description?: string | undefined }): void {
  ctx.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <title>Authorization error</title>
      </head>
      <body>
        <main>
          <h1>This authorization request was refused</h1>
          <p><code>${out.error}</code>: ${out.error_description ?? ''}</p>
        </main>
      </body>
    </html>`.text;
}

export function providerConfiguration(s: ProviderSettings, errors: typeof import('oidc-provider').errors): Configuration {
  const resource = `${s.origin}${MCP_PATH}`;
  return {
    adapter: (model: string) => new OAuthRecords(s.sql, model, s.now),
    jwks: s.keys.jwks as Configuration['jwks'],
    cookies: {
      keys: s.keys.cookieKeys,
      long: { httpOnly: true, sameSite: 'lax', signed: true },
      short: { httpOnly: true, sameSite: 'lax', signed: true },
    },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    // read, write and triage are the resource's scopes (getResourceServerInfo below); they are listed
    // here too so that a client may register with them (RFC 7591 `scope`) and discovery names them
    scopes: ['openid', 'offline_access', ...OAUTH_SCOPES],
    responseTypes: ['code'],
    clientDefaults: { grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' },
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
    pkce: { required: () => true },
    routes: {
      authorization: `${OAUTH_PREFIX}/authorize`,
      token: `${OAUTH_PREFIX}/token`,
      registration: `${OAUTH_PREFIX}/register`,
      revocation: `${OAUTH_PREFIX}/revoke`,
      jwks: `${OAUTH_PREFIX}/jwks`,
      userinfo: `${OAUTH_PREFIX}/userinfo`,
      end_session: `${OAUTH_PREFIX}/logout`,
      introspection: `${OAUTH_PREFIX}/introspect`,
      pushed_authorization_request: `${OAUTH_PREFIX}/par`,
    },
    features: {
      devInteractions: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      registration: { enabled: true },
      revocation: {
        enabled: true,
        // a client revokes only its own tokens
        allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId,
      },
      clientIdMetadataDocument: { enabled: true, ack: 'draft-02' },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== resource) throw new errors.InvalidTarget(`this server issues tokens for ${resource} only`);
          return { scope: OAUTH_SCOPES.join(' '), audience: resource, accessTokenTTL: s.accessTokenSeconds, accessTokenFormat: 'opaque' };
        },
      },
    },
    interactions: { url: (_ctx, interaction) => `${CONSENT_PATH}/${interaction.uid}` },
    // a consent is remembered per person and client (the grants page revokes it)
    loadExistingGrant: async (ctx) => {
      const accountId = ctx.oidc.session?.accountId;
      const grantId = ctx.oidc.result?.consent?.grantId ?? (accountId ? await liveGrantFor(s.sql, accountId, ctx.oidc.client!.clientId) : null);
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // codes and tokens live as long as the grant (revoked on the grants page), not as long as the
    // browser's short sign-in at this server: bound to it, a refresh would fail once it expired
    expiresWithSession: () => false,
    rotateRefreshToken: () => true,
    ttl: {
      AccessToken: s.accessTokenSeconds,
      AuthorizationCode: 60,
      RefreshToken: s.refreshTokenDays * DAY,
      // the remembered consent; its refresh tokens end with it
      Grant: 365 * DAY,
      Interaction: 600,
      Session: 600,
      IdToken: 600,
      ClientCredentials: 600,
    },
    // browser-based MCP clients call the token, registration and revocation endpoints cross-origin;
    // what protects them is PKCE and the client's credentials, not the caller's origin
    clientBasedCORS: () => true,
    fetch: s.fetch as Configuration['fetch'],
    renderError,
  };
}

/** oidc-provider prints a notice at import on Node 20 (it supports 22+), so it is loaded on the first OAuth request only. */
export async function makeProvider(s: ProviderSettings): Promise<Provider> {
  const { default: ProviderClass, errors } = await import('oidc-provider');
  const provider = new ProviderClass(s.origin, providerConfiguration(s, errors));
  // the service sits behind whatever proxy the operator runs; Koa's own setting decides (app.ts: proxy false)
  provider.proxy = false;
  return provider;
}
