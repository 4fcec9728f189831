import { afterAll, beforeAll, expect, it } from 'vitest';
import { can } from '../src/core/access/authorize.ts';
import type { Principal } from '../src/core/auth/principal.ts';
import { addPerson } from '../src/core/people/users.ts';
import { login, startTestApp, type TestApp } from './helpers/app.ts';
import { makeUser, makeWorkspace } from './helpers/factories.ts';

/**
 * Issue 19, defect 5: a former member re-added as a client user kept `billing_operator` and read
 * the console. The flag means something for workspace users only: a client role drops it (in the
 * database, whoever writes the role), and the console's rule asks for a workspace role as well.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const CONSOLE_PAGES = ['/ops/billing', '/ops/operators', '/ops/mail', '/ops/jobs/search?q=billing', '/ops/audit', '/ops/jobs'];

it('a billing operator re-added as a client user loses the flag and gets 403 on every console page', async () => {
  const sql = app.db.sql;
  const ws = await makeWorkspace(sql);
  await makeUser(sql, ws, { role: 'owner' });
  const former = await makeUser(sql, ws, { role: 'member', name: 'Fiona Former' });
  await sql`update memberships set billing_operator = true where workspace_id = ${ws.id} and identity_id = ${former.id}`;
  const asOperator = await login(app, former.email, former.password);
  const before = await fetch(`${app.base}/ops/billing`, { headers: { cookie: asOperator.cookie } });
  expect(before.status).toBe(200);

  const [client] = await sql<{ id: string }[]>`insert into clients (workspace_id, name, code) values (${ws.id}, 'Acme', 'ACME') returning id`;
  await addPerson(sql, { workspaceId: ws.id, email: former.email, name: 'Fiona Former', role: 'client', clientId: client!.id });
  const [m] = await sql`select role, billing_operator from memberships where workspace_id = ${ws.id} and identity_id = ${former.id}`;
  expect(m).toEqual({ role: 'client', billing_operator: false });

  const asClient = await login(app, former.email, former.password);
  for (const path of CONSOLE_PAGES) {
    const res = await fetch(app.base + path, { headers: { cookie: asClient.cookie }, redirect: 'manual' });
    expect(res.status, path).toBe(403);
    expect(await res.text(), path).toContain('Not for you');
  }
});

it('no client membership can hold the flag, whatever writes it', async () => {
  const sql = app.db.sql;
  const ws = await makeWorkspace(sql);
  const [client] = await sql<{ id: string }[]>`insert into clients (workspace_id, name, code) values (${ws.id}, 'Acme', 'ACME') returning id`;
  const cu = await makeUser(sql, ws, { role: 'client', clientId: client!.id });
  await sql`update memberships set billing_operator = true where workspace_id = ${ws.id} and identity_id = ${cu.id}`;
  const [m] = await sql`select billing_operator from memberships where workspace_id = ${ws.id} and identity_id = ${cu.id}`;
  expect(m!.billing_operator).toBe(false);
});

it('the console rule: the flag stands in for the admin role only beside a workspace role', () => {
  const p = (role: Principal['role']): Principal => ({
    workspaceId: 'w',
    slug: 'w',
    identityId: 'i',
    name: 'n',
    role,
    clientId: role.startsWith('client') ? 'c' : null,
    via: 'session',
    scopes: new Set(['read', 'write', 'triage']),
    projectIds: null,
    tokenId: null,
    tokenKind: null,
    sessionId: 's',
    reauthAt: null,
    source: 'ui',
    door: 'console',
    flags: new Set(['billingOperator']),
  });
  for (const action of ['ops.read', 'billing.runs.list', 'billing.runs.read', 'mailbox.read', 'mailbox.messages'] as const) {
    expect(can(p('member'), action), action).toBeNull();
    expect(can(p('client'), action), action).toMatchObject({ reason: 'admin_only' });
    expect(can(p('client_elevated'), action), action).toMatchObject({ reason: 'admin_only' });
  }
});
