import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { loadConfig } from '../../src/config.ts';
import { TokenVerifier } from '../../src/core/auth/token-verifier.ts';
import { startCaches, stopCaches } from '../../src/core/cache.ts';
import { limitsFromConfig } from '../../src/core/limits/from-config.ts';
import { buildApp } from '../../src/app.ts';
import { listen } from '../../src/http/server.ts';
import { makeLogger } from '../../src/log.ts';
import { testDb, type TestDb } from './db.ts';

/** A web process over its own database whose outbound HTTPS also trusts `ca` (the metadata server's certificate). */
export async function startOAuthApp(ca: string, env: Record<string, string> = {}) {
  const db: TestDb = await testDb();
  const config = loadConfig({ ...process.env, ALLOW_LOOPBACK_HOSTS: 'true', ...env, LOG_LEVEL: 'silent', DATABASE_URL: db.url });
  const verifier = new TokenVerifier(db.sql, 5000);
  await verifier.listen();
  const caches = await startCaches(db.sql);
  const limits = limitsFromConfig(db.sql, config);
  const app = buildApp({ sql: db.sql, config, log: makeLogger('silent'), verifier, caches, ...limits, outboundCa: ca });
  const server = await listen(app, 0, '127.0.0.1');
  const port = (server.address() as AddressInfo).port;
  return {
    db,
    port,
    base: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await verifier.close();
      await stopCaches(caches);
      await limits.limits.stop();
      await db.close();
    },
  };
}

/**
 * An HTTPS server on loopback with a throw-away self-signed certificate (openssl), serving client
 * ID metadata documents by path: what an assistant publishes at its client_id URL.
 */
export async function startMetadataServer(): Promise<{
  ca: string;
  url: (path: string) => string;
  serve: (path: string, doc: unknown) => void;
  close: () => Promise<void>;
}> {
  const dir = mkdtempSync(join(tmpdir(), 'wt-cimd-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { stdio: 'ignore' },
  );
  const key = readFileSync(join(dir, 'key.pem'), 'utf8');
  const cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
  rmSync(dir, { recursive: true, force: true });
  const docs = new Map<string, string>();
  const server: Server = createServer({ key, cert }, (req, res) => {
    const doc = docs.get(req.url ?? '');
    res.writeHead(doc ? 200 : 404, { 'content-type': 'application/json' });
    res.end(doc ?? '{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    ca: cert,
    url: (path) => `https://127.0.0.1:${port}${path}`,
    serve: (path, doc) => docs.set(path, JSON.stringify(doc)),
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** An MCP client's OAuth state, in memory: what the SDK's `auth` helpers read and write. */
export class MemoryOAuthProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;

  constructor(
    readonly redirectUrl: string,
    readonly clientMetadata: OAuthClientMetadata,
    readonly clientMetadataUrl?: string,
  ) {}

  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/**
 * A browser, as far as the authorization server can tell: a cookie jar, redirects followed by
 * hand (so the last one, to the client's redirect URI, is read and not fetched), form posts
 * from the server's own page (`Sec-Fetch-Site: same-origin`, as a browser sends it).
 */
export class Browser {
  private jar = new Map<string, string>();

  constructor(readonly base: string) {}

  setCookie(pair: string) {
    const [name, ...rest] = pair.split('=');
    this.jar.set(name!.trim(), rest.join('='));
  }

  private cookieHeader() {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(url: string, init: { method?: string; form?: URLSearchParams } = {}): Promise<Response> {
    const headers: Record<string, string> = { cookie: this.cookieHeader() };
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      headers['sec-fetch-site'] = 'same-origin';
    }
    const res = await fetch(new URL(url, this.base), { method: init.method ?? 'GET', headers, body: init.form?.toString(), redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const pair = c.split(';')[0]!;
      if (/expires=Thu, 01 Jan 1970/i.test(c) || pair.endsWith('=')) this.jar.delete(pair.split('=')[0]!);
      else this.setCookie(pair);
    }
    return res;
  }

  /** Follows redirects within this server; stops at a page (returned) or at a redirect elsewhere (its URL). */
  async follow(url: string, init: { method?: string; form?: URLSearchParams } = {}): Promise<{ page?: Response; redirect?: URL }> {
    let res = await this.request(url, init);
    for (let i = 0; i < 10 && res.status >= 300 && res.status < 400; i++) {
      const next = new URL(res.headers.get('location')!, this.base);
      if (next.origin !== new URL(this.base).origin) return { redirect: next };
      res = await this.request(next.href);
    }
    return { page: res };
  }
}

/** A hidden or named form field's value in a page. */
export const fieldValue = (page: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page)?.[1];
/** The consent form's action. */
export const formAction = (page: string) => /<form method="post" action="([^"]+)"/.exec(page)?.[1];
