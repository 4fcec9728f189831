import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeClient, makeProject, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { Browser, fieldValue, formAction, startMetadataServer, startOAuthApp } from './helpers/oauth.ts';

/**
 * Issue 24's refusals, each with its standard OAuth error, driven over HTTP the way a client and
 * a browser would: PKCE missing or `plain`, an unregistered redirect URI, a reused code (and the
 * tokens it issued revoked), a replayed refresh token, another resource's token, a consent beyond
 * the person's role, a client metadata document on a private address.
 */

let app: Awaited<ReturnType<typeof startOAuthApp>>;
let cimd: Awaited<ReturnType<typeof startMetadataServer>>;
let ws: Workspace;
let member: Person;
let clientUser: Person;

const REDIRECT = 'http://127.0.0.1:9/callback';
const READS = 6;

beforeAll(async () => {
  cimd = await startMetadataServer();
  // a small read budget per token, so that the grant's own budget is seen to run out
  app = await startOAuthApp(cimd.ca, { RATE_LIMIT_READS_PER_MINUTE: String(READS) });
  ws = await makeWorkspace(app.db.sql);
  member = await makeUser(app.db.sql, ws, { role: 'member' });
  const client = await makeClient(app.db.sql, ws);
  clientUser = await makeUser(app.db.sql, ws, { role: 'client', clientId: client.id });
  await makeProject(app.db.sql, ws, { members: [{ person: member }], billingClientId: client.id });
});

afterAll(async () => {
  await app?.close();
  await cimd?.close();
});

/** Dynamic registration (RFC 7591) of a public client. */
async function register(base = app.base): Promise<string> {
  const res = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Refusal test client',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { client_id: string }).client_id;
}

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

function authorizeUrl(
  clientId: string,
  o: { base?: string; challenge?: string | null; method?: string; redirect?: string; resource?: string; scope?: string },
) {
  const base = o.base ?? app.base;
  const url = new URL(`${base}/oauth/authorize`);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', clientId);
  url.searchParams.set('redirect_uri', o.redirect ?? REDIRECT);
  url.searchParams.set('scope', o.scope ?? 'read write');
  url.searchParams.set('state', 'st');
  url.searchParams.set('resource', o.resource ?? `${base}/mcp`);
  if (o.challenge !== null) url.searchParams.set('code_challenge', o.challenge ?? pkce().challenge);
  if (o.method !== undefined) url.searchParams.set('code_challenge_method', o.method);
  else if (o.challenge !== null) url.searchParams.set('code_challenge_method', 'S256');
  return url;
}

async function signedIn(p: Person, base = app.base): Promise<Browser> {
  const browser = new Browser(base);
  const res = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: p.email, password: p.password }),
  });
  expect(res.status).toBe(200);
  browser.setCookie(res.headers.get('set-cookie')!.split(';')[0]!);
  return browser;
}

/** Opens `url` signed in as `p`, allows `scopes`; the URL the browser is sent back to. */
async function consent(p: Person, url: URL, scopes: string[], base = app.base): Promise<URL> {
  const browser = await signedIn(p, base);
  const { page, redirect } = await browser.follow(url.href);
  if (redirect) return redirect;
  const html = await page!.text();
  const form = new URLSearchParams({ _csrf: fieldValue(html, '_csrf')!, workspace: ws.slug, decision: 'allow' });
  for (const s of scopes) form.append('scope', s);
  const back = await browser.follow(formAction(html)!, { method: 'POST', form });
  expect(back.redirect, 'sent back to the client').toBeDefined();
  return back.redirect!;
}

async function token(params: Record<string, string>, base = app.base): Promise<{ status: number; body: Record<string, string> }> {
  const res = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

/** A registered client's code, exchanged: its tokens, and what was needed to get them. */
async function tokensFor(p: Person = member, base = app.base) {
  const clientId = await register(base);
  const { verifier, challenge } = pkce();
  const back = await consent(p, authorizeUrl(clientId, { base, challenge }), ['read', 'write'], base);
  const code = back.searchParams.get('code')!;
  expect(code, back.href).toBeTruthy();
  const exchange = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier, client_id: clientId, resource: `${base}/mcp` };
  const first = await token(exchange, base);
  expect(first.status).toBe(200);
  return { clientId, exchange, tokens: first.body };
}

async function mcp(accessToken: string, base = app.base): Promise<Response> {
  return fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
}

describe('OAuth refusals (issue 24)', () => {
  it('metadata (RFC 8414) names the origin the client used as issuer; a foreign Host is refused (DNS rebinding)', async () => {
    const meta = (await (await fetch(`${app.base}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(meta).toMatchObject({
      issuer: app.base,
      authorization_endpoint: `${app.base}/oauth/authorize`,
      token_endpoint: `${app.base}/oauth/token`,
      registration_endpoint: `${app.base}/oauth/register`,
      revocation_endpoint: `${app.base}/oauth/revoke`,
      code_challenge_methods_supported: ['S256'],
      client_id_metadata_document_supported: true,
    });
    const resource = (await (await fetch(`${app.base}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<string, unknown>;
    expect(resource).toMatchObject({ resource: `${app.base}/mcp`, authorization_servers: [app.base] });
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${app.base}/.well-known/oauth-authorization-server`, { headers: { host: 'attacker.example' } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
  });

  it('PKCE is required: none, or plain, is invalid_request sent back to the client', async () => {
    const clientId = await register();
    const browser = await signedIn(member);
    for (const url of [authorizeUrl(clientId, { challenge: null }), authorizeUrl(clientId, { method: 'plain' })]) {
      const { redirect } = await browser.follow(url.href);
      expect(redirect?.searchParams.get('error'), url.href).toBe('invalid_request');
      expect(redirect?.searchParams.get('state')).toBe('st');
    }
  });

  it('a redirect URI the client did not register is refused on the page, never redirected to', async () => {
    const clientId = await register();
    const browser = await signedIn(member);
    const { page, redirect } = await browser.follow(authorizeUrl(clientId, { redirect: 'https://attacker.example/cb' }).href);
    expect(redirect).toBeUndefined();
    expect(page!.status).toBe(400);
    expect(await page!.text()).toContain('invalid_redirect_uri');
    expect(page!.headers.get('content-security-policy')).toContain("default-src 'none'");
  });

  it('a reused authorization code is invalid_grant, and the tokens it issued stop working', async () => {
    const { exchange, tokens } = await tokensFor();
    expect((await mcp(tokens.access_token!)).status).toBe(200);
    const again = await token(exchange);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
    expect((await mcp(tokens.access_token!)).status).toBe(401);
    const refresh = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: exchange.client_id });
    expect(refresh.body.error).toBe('invalid_grant');
  });

  it('a refresh token replayed after rotation is invalid_grant, and the grant ends', async () => {
    const { clientId, tokens } = await tokensFor();
    const rotated = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: clientId });
    expect(rotated.status).toBe(200);
    expect(rotated.body.refresh_token).not.toBe(tokens.refresh_token);
    expect((await mcp(rotated.body.access_token!)).status).toBe(200);
    const replay = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: clientId });
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    expect((await mcp(rotated.body.access_token!)).status).toBe(401);
    const next = await token({ grant_type: 'refresh_token', refresh_token: rotated.body.refresh_token!, client_id: clientId });
    expect(next.body.error).toBe('invalid_grant');
  });

  it('a refresh token outlives the browser’s sign-in at the authorization server (it is bound to the grant, not to that session)', async () => {
    const { clientId, tokens } = await tokensFor();
    await app.db.sql`delete from oauth_records where model = 'Session'`;
    const rotated = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: clientId });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    expect((await mcp(rotated.body.access_token!)).status).toBe(200);
  });

  it('another resource: no token is issued for it (invalid_target), and a token for this server’s other name or for REST is refused', async () => {
    const clientId = await register();
    const browser = await signedIn(member);
    const { redirect } = await browser.follow(authorizeUrl(clientId, { resource: 'https://other.example/mcp' }).href);
    expect(redirect?.searchParams.get('error')).toBe('invalid_target');
    // the same server reached as localhost is another issuer and another resource
    const localhost = app.base.replace('127.0.0.1', 'localhost');
    const { tokens } = await tokensFor(member, localhost);
    expect((await mcp(tokens.access_token!, localhost)).status).toBe(200);
    const elsewhere = await mcp(tokens.access_token!);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers.get('www-authenticate')).toContain('error="invalid_token"');
    // and the REST API takes `wt_` tokens only
    const rest = await fetch(`${app.base}/api/w/${ws.slug}/workflow`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(rest.status).toBe(401);
  });

  it('an access token spends its grant’s rate limit, like a delegated API token: past it, 429', async () => {
    const { tokens } = await tokensFor();
    const first = await mcp(tokens.access_token!);
    expect(first.headers.get('ratelimit-limit')).toBe(String(READS));
    let last = first;
    for (let i = 1; i <= READS && last.status === 200; i++) last = await mcp(tokens.access_token!);
    expect(last.status).toBe(429);
    // another grant of the same person has its own budget
    const other = await tokensFor();
    expect((await mcp(other.tokens.access_token!)).status).toBe(200);
  });

  it('revoking the refresh token (RFC 7009) ends the grant: its access token is refused and the grants page says revoked', async () => {
    const { clientId, tokens } = await tokensFor();
    const res = await fetch(`${app.base}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: tokens.refresh_token!, token_type_hint: 'refresh_token', client_id: clientId }).toString(),
    });
    expect(res.status).toBe(200);
    expect((await mcp(tokens.access_token!)).status).toBe(401);
    const [grant] = await app.db.sql<{ revoked: boolean }[]>`
      select t.revoked_at is not null as revoked from oauth_grants g join api_tokens t on t.id = g.token_id where g.client_id = ${clientId}`;
    expect(grant).toEqual({ revoked: true });
  });

  it('a deactivated member’s access token is refused, like their API tokens', async () => {
    const other = await makeUser(app.db.sql, ws, { role: 'member' });
    const { tokens } = await tokensFor(other);
    await app.db.sql`update memberships set deactivated_at = now() where identity_id = ${other.id}`;
    expect((await mcp(tokens.access_token!)).status).toBe(401);
  });

  it('a consent for more than the person’s role allows is invalid_scope', async () => {
    const clientId = await register();
    // a client user may delegate read and write, never triage (the Inbox)
    const back = await consent(clientUser, authorizeUrl(clientId, { scope: 'read write triage' }), ['read', 'triage']);
    expect(back.searchParams.get('error')).toBe('invalid_scope');
    const [grants] = await app.db.sql<{ n: number }[]>`select count(*)::int as n from oauth_grants where identity_id = ${clientUser.id}`;
    expect(grants!.n).toBe(0);
    // the refusal is audited, with the person and the door
    const audit = await app.db.sql`select door, outcome, target from ops_audit where action = 'oauth.consent' and actor_id = ${clientUser.id}`;
    expect(audit).toEqual([{ door: 'rest', outcome: 'refused', target: `client ${clientId}` }]);
  });

  it('a client metadata document on a private or metadata address is invalid_client; nothing is fetched', async () => {
    const browser = await signedIn(member);
    for (const id of ['https://10.0.0.7/client.json', 'https://169.254.169.254/latest/client.json', 'https://metadata.google.internal/c.json']) {
      const { page, redirect } = await browser.follow(authorizeUrl(id, {}).href);
      expect(redirect, id).toBeUndefined();
      expect(page!.status, id).toBe(400);
      expect(await page!.text(), id).toContain('invalid_client');
    }
  });

  it('loopback metadata documents only with ALLOW_LOOPBACK_HOSTS=true', async () => {
    const strict = await startOAuthApp(cimd.ca, { ALLOW_LOOPBACK_HOSTS: 'false' });
    try {
      const path = '/strict/client.json';
      cimd.serve(path, {
        client_id: cimd.url(path),
        client_name: 'Loopback',
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'none',
        application_type: 'native',
      });
      const url = new URL(authorizeUrl(cimd.url(path), {}).href.replace(app.base, strict.base));
      url.searchParams.set('resource', `${strict.base}/mcp`);
      const res = await fetch(url, { redirect: 'manual' });
      expect(res.status).toBe(400);
      expect(await res.text()).toContain('invalid_client');
    } finally {
      await strict.close();
    }
  });
});
