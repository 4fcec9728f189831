import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeLogger } from '../src/log.ts';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { mcpSession } from './helpers/mcp.ts';
import { makeProject, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

// Issue 9, part 2: tokens, passwords and session ids never reach the logs; only hashes at rest.

const lines: string[] = [];
const capture = { write: (chunk: string) => void lines.push(chunk) };
const logText = () => lines.join('');

let app: TestApp;
let ws: Workspace;
let owner: Person;
let project: { id: string; key: string };
/** Every secret the scenario handles; none may appear in the log or in plain text at rest. */
const secrets: string[] = [];
let session: SessionCookie;
let apiToken: string;

const WRONG_PASSWORD = 'Wrong-Password-6f1c2e';

beforeAll(async () => {
  app = await startTestApp({ log: makeLogger('trace', capture) });
  ws = await makeWorkspace(app.db.sql);
  owner = await makeUser(app.db.sql, ws, { role: 'owner' });
  project = await makeProject(app.db.sql, ws);
  secrets.push(owner.password, WRONG_PASSWORD);
  await runScenario();
});
afterAll(() => app.close());

const cookieValue = (s: SessionCookie) => s.cookie.slice(s.cookie.indexOf('=') + 1);

/** Everything that handles a secret: logins, re-authentication, tokens made and used, errors, MCP. */
async function runScenario() {
  expect((await app.call('POST', '/api/auth/login', { body: { email: owner.email, password: WRONG_PASSWORD } })).status).toBe(401);
  session = await login(app, owner.email, owner.password);
  secrets.push(cookieValue(session), session.csrfToken);
  expect((await app.call('POST', '/api/auth/reauth', { session, body: { password: WRONG_PASSWORD } })).status).toBe(403);
  expect((await app.call('POST', '/api/auth/reauth', { session, body: { password: owner.password } })).status).toBe(200);

  const created = await app.call('POST', `/api/w/${ws.slug}/tokens`, { session, body: { name: 'logged?', scopes: ['read', 'write'] } });
  expect(created.status).toBe(201);
  apiToken = created.body.token;
  const factoryToken = (await makeToken(app.db.sql, ws, owner)).token;
  secrets.push(apiToken, factoryToken);

  expect((await app.call('GET', `/api/w/${ws.slug}/workflow`, { token: apiToken })).status).toBe(200);
  expect((await app.call('GET', `/api/w/${ws.slug}/workflow`, { token: apiToken.slice(0, -1) + 'x' })).status).toBe(401);
  const ticket = await app.call('POST', `/api/w/${ws.slug}/tickets`, {
    token: apiToken,
    body: { projectId: project.id, title: 'Logged ticket' },
    headers: { 'idempotency-key': 'secrets-log-1' },
  });
  expect(ticket.status).toBe(201);

  // errors that are logged with their cause: a failing login (the request carried the password),
  // a failing token write, and a failing MCP tool call
  const sql = app.db.sql;
  await sql`create function fail_always() returns trigger language plpgsql as $$ begin raise exception 'injected fault'; end $$`;
  await sql.unsafe(`create trigger fail_sessions before insert on sessions for each row execute function fail_always()`);
  await sql.unsafe(`create trigger fail_events before insert on ticket_events for each row execute function fail_always()`);
  try {
    expect((await app.call('POST', '/api/auth/login', { body: { email: owner.email, password: owner.password } })).status).toBe(500);
    const failing = await app.call('POST', `/api/w/${ws.slug}/tickets`, { token: apiToken, session, body: { projectId: project.id, title: 'Fails' } });
    expect(failing.status).toBe(500);
    const mcp = await mcpSession(app, factoryToken);
    try {
      await mcp.ok('get_workflow', {});
      expect((await mcp.fail('create_ticket', { project: project.key, title: 'Fails over MCP' })).code).toBe('internal');
    } finally {
      await mcp.close();
    }
  } finally {
    await sql.unsafe(`drop trigger fail_sessions on sessions; drop trigger fail_events on ticket_events; drop function fail_always()`);
  }
  expect((await app.call('POST', '/api/auth/logout', { session })).status).toBe(200);
}

describe('secrets in logs', () => {
  it('the scenario was logged (at trace level), errors included', () => {
    expect(logText()).toContain('unhandled error');
    expect(logText()).toContain('mcp tool failed');
  });

  it('no password, token, session cookie or CSRF token appears in any log line', () => {
    const text = logText();
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThanOrEqual(8);
      expect(text.includes(secret), `a secret of ${secret.length} characters is in the log`).toBe(false);
    }
  });

  it('censors credentials that would reach a log line anyway (defense in depth)', () => {
    const before = lines.length;
    const log = makeLogger('info', capture);
    log.info({
      req: { headers: { authorization: `Bearer ${apiToken}`, cookie: session.cookie, 'x-csrf-token': session.csrfToken } },
      body: { email: owner.email, password: owner.password },
      mailbox: { host: 'imap.example.test', password: 'mailbox-secret-93a1' },
    });
    const line = lines.slice(before).join('');
    expect(line).toContain('imap.example.test');
    for (const secret of [apiToken, cookieValue(session), session.csrfToken, owner.password, 'mailbox-secret-93a1']) expect(line).not.toContain(secret);
    expect(line).toContain('[redacted]');
  });
});

describe('only hashes at rest', () => {
  const sha256 = (s: string) => createHash('sha256').update(s).digest();

  // The CSRF token is stored as it is: it is handed to the page's script and is no credential
  // without the session cookie, whose secret is stored as a hash only.
  const atRest = () => secrets.filter((s) => s !== session.csrfToken);

  it('api_tokens and sessions hold SHA-256 hashes, never the secret', async () => {
    const sql = app.db.sql;
    const fresh = await login(app, owner.email, owner.password);
    secrets.push(cookieValue(fresh));
    const tokens = await sql<{ row: string; token_hash: Buffer }[]>`select t::text as row, token_hash from api_tokens t where workspace_id = ${ws.id}`;
    expect(tokens.map((t) => t.token_hash.toString('hex'))).toContain(sha256(apiToken).toString('hex'));
    const sessions = await sql<{ row: string; token_hash: Buffer }[]>`
      select s::text as row, token_hash from sessions s where identity_id = ${owner.id}`;
    expect(sessions.map((r) => r.token_hash.toString('hex'))).toContain(sha256(cookieValue(fresh)).toString('hex'));
    const everything = [...tokens, ...sessions].map((r) => r.row).join('\n');
    for (const secret of atRest()) expect(everything.includes(secret)).toBe(false);
  });

  it('no other table of the service stores a secret in plain text either', async () => {
    const sql = app.db.sql;
    const tables = await sql<{ name: string }[]>`
      select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`;
    for (const { name } of tables) {
      const rows = await sql.unsafe<{ row: string }[]>(`select t::text as row from "${name.replace(/"/g, '""')}" t`);
      const text = rows.map((r) => r.row).join('\n');
      for (const secret of atRest()) expect(text.includes(secret), `${name} holds a secret`).toBe(false);
    }
  });
});
