import type { IncomingMessage, ServerResponse } from 'node:http';
import type Koa from 'koa';
import { Router } from '@koa/router';
import { koaBody } from 'koa-body';
import type Provider from 'oidc-provider';
import { allowedHosts, assertHostAndOrigin } from '../../core/auth/origin.ts';
import { clockOf } from '../../core/ctx.ts';
import { serverKeys, type ServerKeys } from '../../core/oauth/keys.ts';
import type { Services } from '../../core/services.ts';
import { outboundGuardFromConfig, type OutboundGuard } from '../../core/net/outbound.ts';
import { guardedFetch } from './guarded-fetch.ts';
import { consentRoutes } from './consent.ts';
import { grantRoutes } from './grants-page.ts';
import { messagePage, pageCsp } from './pages.ts';
import { makeProvider, OAUTH_PREFIX, type OAuthServer } from './provider.ts';

/** The authorization server's metadata (RFC 8414), and the OpenID name for the same document. */
const METADATA_PATHS = new Set(['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']);
/** Providers kept at once (one per origin clients use: a name or two, http and https). */
const MAX_ORIGINS = 8;
/** Our own pages under /oauth; every other /oauth path is the library's. */
const PAGE_PATH = /^\/oauth\/(consent\/[^/]+|grants(\/[^/]+\/revoke)?|login)$/;

export interface OAuthOptions {
  /** The guard the client metadata documents are fetched through; default: the configured one. */
  outbound?: OutboundGuard;
  /** Extra certificate authorities for those fetches (tests serve metadata documents over self-signed HTTPS). */
  extraCa?: string;
}

/**
 * The authorization server mounted in the web process (issue 24): oidc-provider's endpoints
 * (metadata, authorize, token, register, revoke) and our pages (sign in, consent, grants). The
 * issuer is the origin the client used, limited to the hosts /mcp accepts (the same DNS-rebinding
 * guard), so a token's audience is the /mcp the client connected to. Mounted before the JSON
 * body parser: the token and registration endpoints parse their own bodies.
 */
export function oauthServer(services: Services, options: OAuthOptions = {}): Koa.Middleware {
  const { config } = services;
  const now = clockOf(services);
  const hosts = allowedHosts(config.HOST, config.MCP_ALLOWED_HOSTS);
  const fetch = guardedFetch({ guard: options.outbound ?? outboundGuardFromConfig(config), timeoutMs: 5000, maxBytes: 5 * 1024, extraCa: options.extraCa });
  let keys: Promise<ServerKeys> | null = null;
  const providers = new Map<string, Promise<{ provider: Provider; handle: (req: IncomingMessage, res: ServerResponse) => Promise<void> }>>();

  const entryFor = (ctx: Koa.Context) => {
    // the Host only: a browser-based client calls the token endpoint from its own origin (CORS)
    assertHostAndOrigin(hosts, ctx.get('host'), '');
    const origin = `${ctx.protocol}://${ctx.host}`;
    let entry = providers.get(origin);
    if (!entry) {
      keys ??= serverKeys(services.sql);
      entry = keys.then(async (k) => {
        const provider = await makeProvider({
          sql: services.sql,
          now,
          origin,
          keys: k,
          fetch,
          accessTokenSeconds: config.OAUTH_ACCESS_TOKEN_SECONDS,
          refreshTokenDays: config.OAUTH_REFRESH_TOKEN_DAYS,
        });
        return { provider, handle: provider.callback() as (req: IncomingMessage, res: ServerResponse) => Promise<void> };
      });
      entry.catch(() => providers.delete(origin));
      // a Host may carry any port: keep a few origins, not one provider per port anyone sends
      if (providers.size >= MAX_ORIGINS) providers.delete(providers.keys().next().value!);
      providers.set(origin, entry);
    }
    return entry;
  };
  const server: OAuthServer = { providerFor: async (ctx) => (await entryFor(ctx)).provider };

  const body = koaBody({ urlencoded: true, json: false, text: false, multipart: false, formLimit: '64kb' });
  const router = new Router({ prefix: OAUTH_PREFIX });
  consentRoutes(router, body, services, server);
  grantRoutes(router, body, services);
  const pages = router.routes();

  return async (ctx, next) => {
    const path = ctx.path;
    if (PAGE_PATH.test(path)) {
      ctx.set('Content-Security-Policy', pageCsp());
      await pages(ctx as never, async () => {});
      if (ctx.body === undefined) {
        ctx.status = 404;
        ctx.type = 'text/html; charset=utf-8';
        ctx.body = messagePage('Not found', 'There is no such page.');
      }
      return;
    }
    if (path !== OAUTH_PREFIX && !path.startsWith(`${OAUTH_PREFIX}/`) && !METADATA_PATHS.has(path)) return next();
    const { handle } = await entryFor(ctx);
    ctx.respond = false;
    await handle(ctx.req, ctx.res);
  };
}
