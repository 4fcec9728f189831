import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../src/config.ts';
import { TokenVerifier } from '../../src/core/auth/token-verifier.ts';
import { limitsFromConfig } from '../../src/core/limits/from-config.ts';
import type { TokenLimits } from '../../src/core/limits/token-limits.ts';
import { startCaches, stopCaches } from '../../src/core/cache.ts';
import { loadSecretBox } from '../../src/core/mail/secret-box.ts';
import { outboundGuardFromConfig } from '../../src/core/net/outbound.ts';
import { buildApp } from '../../src/app.ts';
import { listen } from '../../src/http/server.ts';
import { makeLogger, type Logger } from '../../src/log.ts';
import { testDb, type TestDb } from './db.ts';
import { checkResponse } from './openapi-check.ts';

export interface TestApp {
  db: TestDb;
  base: string;
  verifier: TokenVerifier;
  /** The per-token limits of this server (`settle()` stands in for its once-a-second timer). */
  limits: TokenLimits;
  /** Sends a request; JSON bodies are encoded, and the parsed JSON (or text) comes back with the response. */
  call: (method: string, path: string, opts?: CallOptions) => Promise<CallResult>;
  close: () => Promise<void>;
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
  session?: SessionCookie;
}

export interface CallResult {
  status: number;
  headers: Headers;
  body: any;
}

export interface SessionCookie {
  cookie: string;
  csrfToken: string;
}

export interface TestAppOptions {
  now?: () => Date;
  tokenCacheMs?: number;
  /** Environment settings over the defaults (say, small rate limits). */
  env?: Record<string, string>;
  /** Another app's database, shared (two web processes over one PostgreSQL); it stays open on close. */
  db?: TestDb;
  log?: Logger;
}

/** Per-token limits high enough that no suite meets them unless it sets its own through `env`. */
const UNLIMITED = { RATE_LIMIT_READS_PER_MINUTE: '1000000', RATE_LIMIT_WRITES_PER_MINUTE: '1000000' };
/** The test servers (dovecot, SMTP) listen on loopback; a suite may set 'false' through `env`. */
const LOOPBACK = { ALLOW_LOOPBACK_HOSTS: 'true' };

/** A real HTTP server on a random port over a database of its own. */
export async function startTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const db = opts.db ?? (await testDb());
  const config = loadConfig({ ...process.env, ...UNLIMITED, ...LOOPBACK, ...opts.env, LOG_LEVEL: 'silent', DATABASE_URL: db.url });
  const log = opts.log ?? makeLogger('silent');
  const verifier = new TokenVerifier(db.sql, opts.tokenCacheMs ?? 5000);
  await verifier.listen();
  const caches = await startCaches(db.sql);
  const limits = limitsFromConfig(db.sql, config);
  const mailbox = { secrets: loadSecretBox(config), outbound: outboundGuardFromConfig(config) };
  const app = buildApp({ sql: db.sql, config, log, verifier, caches, ...limits, now: opts.now, mailbox });
  const server: Server = await listen(app, 0, '127.0.0.1');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const call = async (method: string, path: string, o: CallOptions = {}): Promise<CallResult> => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    if (o.session) {
      headers.cookie = o.session.cookie;
      if (!['GET', 'HEAD'].includes(method)) headers['x-csrf-token'] ??= o.session.csrfToken;
    }
    let body: string | Uint8Array | undefined = o.rawBody;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(base + path, { method, headers, body: body as BodyInit | undefined });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
    // every response is checked against the OpenAPI document: a mismatch fails the test that caused it
    checkResponse(method, base + path, res.status, res.headers.get('content-type') ?? '', parsed);
    return { status: res.status, headers: res.headers, body: parsed };
  };
  return {
    db,
    base,
    verifier,
    limits: limits.limits,
    call,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await verifier.close();
      await stopCaches(caches);
      await limits.limits.stop();
      if (!opts.db) await db.close();
    },
  };
}

/** Logs in through the API and returns the cookie and CSRF token a browser would hold. */
export async function login(app: TestApp, email: string, password: string): Promise<SessionCookie> {
  const res = await fetch(`${app.base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${await res.text()}`);
  const setCookie = res.headers.get('set-cookie') ?? '';
  const body = (await res.json()) as { csrfToken: string };
  return { cookie: setCookie.split(';')[0]!, csrfToken: body.csrfToken };
}
