import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser as Chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkBothSizes, launchBrowser } from './helpers/browser.ts';
import { makeProject, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { startMetadataServer, startOAuthApp } from './helpers/oauth.ts';

/**
 * The consent page and the grants page in a real browser (Chromium): axe at 1280×800 and
 * 390×844, under their own CSP; a person allows, sees the grant with its last use, revokes it,
 * and the client's token is refused at once.
 */

let app: Awaited<ReturnType<typeof startOAuthApp>>;
let cimd: Awaited<ReturnType<typeof startMetadataServer>>;
let chromium: Chromium;
let ws: Workspace;
let person: Person;
let project: { id: string; key: string };

/** The client's redirect URI: a real listener on loopback that records where the browser came back with. */
let REDIRECT = '';
let callbackServer: Server;
let callback: URL | null = null;

beforeAll(async () => {
  callbackServer = createServer((req, res) => {
    if (req.url!.startsWith('/callback')) callback = new URL(req.url!, REDIRECT);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('back at the client');
  });
  await new Promise<void>((r) => callbackServer.listen(0, '127.0.0.1', r));
  REDIRECT = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}/callback`;
  chromium = await launchBrowser();
  cimd = await startMetadataServer();
  app = await startOAuthApp(cimd.ca);
  ws = await makeWorkspace(app.db.sql);
  person = await makeUser(app.db.sql, ws, { role: 'member', name: 'Mia <Member>' });
  project = await makeProject(app.db.sql, ws, { members: [{ person }] });
});

afterAll(async () => {
  await chromium?.close();
  await app?.close();
  await cimd?.close();
  await new Promise((r) => callbackServer?.close(r));
});

describe('consent and grants pages (issue 24)', () => {
  it('sign in, consent, grants list with last use, revoke: axe passes at both sizes', async () => {
    const path = '/ui/client.json';
    const clientId = cimd.url(path);
    // a hostile name is shown as text, next to the host the document came from
    cimd.serve(path, {
      client_id: clientId,
      client_name: 'Helpful <b>Bot</b>',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    });
    const verifier = randomBytes(32).toString('base64url');
    const url = new URL(`${app.base}/oauth/authorize`);
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      scope: 'read write triage',
      state: 's1',
      resource: `${app.base}/mcp`,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }))
      url.searchParams.set(k, v);

    const context = await chromium.newContext();
    const page = await context.newPage();
    const cspErrors: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/.test(m.text())) cspErrors.push(m.text());
    });

    // not signed in: the sign-in form, then the consent page
    await page.goto(url.href);
    await checkBothSizes(page, 'oauth-sign-in');
    await page.fill('#email', person.email);
    await page.fill('#password', person.password);
    await Promise.all([page.waitForURL(/\/oauth\/consent\//), page.click('button[type=submit]')]);
    await checkBothSizes(page, 'oauth-consent');
    const text = await page.textContent('main');
    expect(text).toContain('Helpful <b>Bot</b>');
    expect(text).toContain(new URL(clientId).host);
    expect(text).toContain(new URL(REDIRECT).host);
    expect(text).toContain('Mia <Member>');
    await page.uncheck('input[name=scope][value=triage]');
    await page.check(`input[name=project][value="${project.id}"]`);
    await Promise.all([page.waitForURL(`${REDIRECT}**`), page.click('button[value=allow]')]);
    expect(callback!.searchParams.get('state')).toBe('s1');
    const code = callback!.searchParams.get('code')!;
    const tokenRes = await fetch(`${app.base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier, client_id: clientId }).toString(),
    });
    const tokens = (await tokenRes.json()) as { access_token: string; scope: string };
    expect(tokens.scope.split(' ').sort()).toEqual(['read', 'write']);
    const call = () =>
      fetch(`${app.base}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    expect((await call()).status).toBe(200);

    // the grants page: the client, its scopes and project, its last use; revoke ends it
    await page.goto(`${app.base}/oauth/grants`);
    await checkBothSizes(page, 'oauth-grants');
    const row = await page.textContent('li.grant');
    expect(row).toContain('Helpful <b>Bot</b>');
    expect(row).toContain('read, write');
    expect(row).toContain(project.key);
    expect(row).not.toContain('never');
    await Promise.all([page.waitForURL(/revoked=1/), page.click('li.grant button')]);
    expect(await page.textContent('li.grant')).toContain('revoked');
    await checkBothSizes(page, 'oauth-grants-revoked');
    expect((await call()).status).toBe(401);
    const audit = await app.db.sql`select action, outcome from ops_audit where actor_id = ${person.id} order by at, action`;
    expect(audit).toEqual([
      { action: 'oauth.consent', outcome: 'succeeded' },
      { action: 'oauth.revoke', outcome: 'succeeded' },
    ]);
    expect(cspErrors, cspErrors.join('\n')).toEqual([]);
    await context.close();
  });
});
