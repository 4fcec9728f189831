import { auth, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeProject, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { Browser, fieldValue, formAction, MemoryOAuthProvider, startMetadataServer, startOAuthApp } from './helpers/oauth.ts';

/**
 * Issue 24's acceptance, end to end against a running server, with the MCP SDK's own client
 * OAuth helpers: 401 → metadata → client ID metadata document (served here over HTTPS on
 * loopback) or dynamic registration → a signed-in person consents over HTTP → token →
 * tools/list → a write attributed to the person → refresh → revocation → 401.
 */

let app: Awaited<ReturnType<typeof startOAuthApp>>;
let cimd: Awaited<ReturnType<typeof startMetadataServer>>;
let ws: Workspace;
let person: Person;
let project: { id: string; key: string };

beforeAll(async () => {
  cimd = await startMetadataServer();
  app = await startOAuthApp(cimd.ca);
  ws = await makeWorkspace(app.db.sql);
  person = await makeUser(app.db.sql, ws, { role: 'member' });
  project = await makeProject(app.db.sql, ws, { members: [{ person }] });
  await makeProject(app.db.sql, ws, { members: [{ person }] });
});

afterAll(async () => {
  await app?.close();
  await cimd?.close();
});

const REDIRECT = 'http://127.0.0.1:9/callback';

async function signedIn(p: Person): Promise<Browser> {
  const browser = new Browser(app.base);
  const res = await fetch(`${app.base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: p.email, password: p.password }),
  });
  expect(res.status).toBe(200);
  browser.setCookie(res.headers.get('set-cookie')!.split(';')[0]!);
  return browser;
}

/** The person opens the authorization URL, reads the consent page and allows `scopes` on `projectIds`; returns where the browser is sent. */
async function consent(browser: Browser, url: URL, choice: { scopes: string[]; projectIds: string[] }): Promise<{ page: string; back: URL }> {
  const { page } = await browser.follow(url.href);
  expect(page?.status).toBe(200);
  expect(page!.headers.get('content-security-policy')).toContain("default-src 'none'");
  const html = await page!.text();
  const form = new URLSearchParams({ _csrf: fieldValue(html, '_csrf')!, workspace: ws.slug, decision: 'allow' });
  for (const s of choice.scopes) form.append('scope', s);
  for (const p of choice.projectIds) form.append('project', p);
  const { redirect } = await browser.follow(formAction(html)!, { method: 'POST', form });
  expect(redirect, 'the browser goes back to the client').toBeDefined();
  return { page: html, back: redirect! };
}

async function mcpWith(provider: MemoryOAuthProvider): Promise<Client> {
  const client = new Client({ name: 'oauth-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${app.base}/mcp`), { authProvider: provider }));
  return client;
}

async function toolNamesWithToken(token: string): Promise<string[]> {
  const client = new Client({ name: 'token-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${app.base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  const names = (await client.listTools()).tools.map((t) => t.name).sort();
  await client.close();
  return names;
}

async function mcpStatus(accessToken: string): Promise<number> {
  const res = await fetch(`${app.base}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  return res.status;
}

/** Polls until the token is refused (the acceptance allows 10 s; a notification makes it immediate). */
async function refusedWithin10s(accessToken: string): Promise<number> {
  const until = Date.now() + 10_000;
  let status = await mcpStatus(accessToken);
  while (status !== 401 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 200));
    status = await mcpStatus(accessToken);
  }
  return status;
}

async function runFlow(provider: MemoryOAuthProvider) {
  const serverUrl = `${app.base}/mcp`;
  // 1. the MCP endpoint refuses and names its metadata
  const first = await fetch(serverUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(first.status).toBe(401);
  const { resourceMetadataUrl } = extractWWWAuthenticateParams(first);
  expect(resourceMetadataUrl?.href).toBe(`${app.base}/.well-known/oauth-protected-resource/mcp`);
  // 2. metadata → registration (metadata document or DCR) → an authorization URL
  expect(await auth(provider, { serverUrl, resourceMetadataUrl })).toBe('REDIRECT');
  const url = provider.authorizationUrl!;
  expect(url.searchParams.get('code_challenge_method')).toBe('S256');
  expect(url.searchParams.get('resource')).toBe(serverUrl);
  // 3. the person consents: read and write, one project
  const browser = await signedIn(person);
  const { page, back } = await consent(browser, url, { scopes: ['read', 'write'], projectIds: [project.id] });
  expect(back.origin + back.pathname).toBe(REDIRECT);
  const code = back.searchParams.get('code');
  expect(code, back.href).toBeTruthy();
  // 4. the token
  expect(await auth(provider, { serverUrl, resourceMetadataUrl, authorizationCode: code! })).toBe('AUTHORIZED');
  const tokens = provider.saved!;
  expect(tokens.refresh_token).toBeTruthy();
  expect(tokens.scope?.split(' ').sort()).toEqual(['read', 'write']);
  // stored hashed: no code or token appears in the authorization server's storage
  const stored = (await app.db.sql<{ t: string }[]>`select payload::text || id_hash::text as t from oauth_records`).map((r) => r.t).join('\n');
  for (const secret of [code!, tokens.access_token, tokens.refresh_token!]) expect(stored).not.toContain(secret);
  // 5. tools/list: exactly what a read+write token limited to that project is offered
  const client = await mcpWith(provider);
  const names = (await client.listTools()).tools.map((t) => t.name).sort();
  const same = await makeToken(app.db.sql, ws, person, { scopes: ['read', 'write'], projectIds: [project.id] });
  expect(names).toEqual(await toolNamesWithToken(same.token));
  const writeAll = await makeToken(app.db.sql, ws, person, { scopes: ['read', 'write', 'triage'] });
  expect(names.length).toBeGreaterThan(0);
  expect(await toolNamesWithToken(writeAll.token)).toEqual(expect.arrayContaining(names));
  // 6. a write is the person's, from MCP
  const created = await client.callTool({ name: 'create_ticket', arguments: { project: project.key, title: 'Made through OAuth' } });
  expect(created.isError, JSON.stringify(created)).toBeFalsy();
  const [ticket] = await app.db.sql<{ reporter_id: string; source: string }[]>`select reporter_id, source from tickets where title = 'Made through OAuth'`;
  expect(ticket).toEqual({ reporter_id: person.id, source: 'mcp' });
  await client.close();
  // 7. refresh: a new access token (and a new refresh token) that works
  const before = tokens.access_token;
  expect(await auth(provider, { serverUrl, resourceMetadataUrl })).toBe('AUTHORIZED');
  expect(provider.saved!.access_token).not.toBe(before);
  expect(provider.saved!.refresh_token).not.toBe(tokens.refresh_token);
  expect(await mcpStatus(provider.saved!.access_token)).toBe(200);
  // 8. revocation (RFC 7009) of the access token: the next call is refused
  const clientId = provider.info!.client_id;
  const revoked = await fetch(`${app.base}/oauth/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: provider.saved!.access_token, client_id: clientId }).toString(),
  });
  expect(revoked.status).toBe(200);
  expect(await refusedWithin10s(provider.saved!.access_token)).toBe(401);
  return { page, clientId };
}

describe('OAuth for MCP with the SDK client (issue 24)', () => {
  it('client ID metadata document on loopback: consent, token, tools, write, refresh, revoke', async () => {
    const path = '/assistant/client.json';
    const clientId = cimd.url(path);
    cimd.serve(path, {
      client_id: clientId,
      client_name: 'Loopback Assistant',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    });
    const provider = new MemoryOAuthProvider(REDIRECT, { client_name: 'Loopback Assistant', redirect_uris: [REDIRECT] }, clientId);
    const { page } = await runFlow(provider);
    expect(provider.info?.client_id).toBe(clientId);
    // the consent page names the client, the host its metadata came from and the redirect's host
    expect(page).toContain('Loopback Assistant');
    expect(page).toContain(new URL(clientId).host);
    expect(page).toContain('127.0.0.1:9');
  });

  it('dynamic client registration (RFC 7591): the same flow', async () => {
    const provider = new MemoryOAuthProvider(REDIRECT, {
      client_name: 'Registered Assistant',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    } as never);
    const { page, clientId } = await runFlow(provider);
    expect(clientId).not.toMatch(/^https:/);
    expect(page).toContain('Registered Assistant');
  });
});
