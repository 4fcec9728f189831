import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makeBank, makeClient, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

/**
 * Clients and their billing recipients through REST (issue 22): GET/POST /clients, GET/PATCH
 * /clients/{id}, POST /clients/{id}/archive, GET/PUT /clients/{id}/recipients. Owner/Admin by
 * session or by a token with the admin scope; workspace users list; every refusal with its reason.
 */

let app: TestApp;
let ws: Workspace;
let owner: Person;
let member: Person;
let session: SessionCookie;
let memberSession: SessionCookie;
let adminToken: string;
let writeToken: string;
let clientUserSession: SessionCookie;

type Auth = { session?: SessionCookie; token?: string };
const W = () => `/api/w/${ws.slug}`;
const call = (method: string, path: string, body?: unknown, auth: Auth = { session }) => app.call(method, `${W()}${path}`, { ...auth, body });
const reasonOf = (res: { body: any }) => res.body?.error?.details?.reason;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  owner = await makeUser(sql, ws, { role: 'owner' });
  member = await makeUser(sql, ws, { role: 'member' });
  session = await login(app, owner.email, owner.password);
  memberSession = await login(app, member.email, member.password);
  adminToken = (await makeToken(sql, ws, owner, { scopes: ['admin'] })).token;
  writeToken = (await makeToken(sql, ws, owner, { scopes: ['read', 'write', 'triage'] })).token;
  const existing = await makeClient(sql, ws, { name: 'Existing', code: 'EXIST' });
  const clientUser = await makeUser(sql, ws, { role: 'client', clientId: existing.id });
  clientUserSession = await login(app, clientUser.email, clientUser.password);
});
afterAll(() => app.close());

describe('POST /clients', () => {
  it('creates a client with defaults: 201, code upper-cased, locale canonical, audited with its door', async () => {
    const res = await call('POST', '/clients', { name: '  Acme Ltd ', code: 'acme', locale: 'de-de' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      name: 'Acme Ltd',
      code: 'ACME',
      locale: 'de-DE',
      timesheetLayout: 'combined',
      billingPolicy: 'paid',
      billingMode: 'period',
      currency: 'EUR',
      taxRateBasisPoints: 0,
      taxLabel: null,
      taxNote: null,
      paymentTermsDays: null,
      billingAddress: null,
      taxId: null,
      timesheetLines: 'ticket',
      delivery: 'review', // issue 23: a new client's timesheets wait for the run's approval
      archivedAt: null,
      createdAt: expect.any(String),
    });
    const [audit] = await app.db.sql`select action, target, outcome, door from ops_audit where workspace_id = ${ws.id} and action = 'clients.create'`;
    expect(audit).toMatchObject({ target: 'acme', outcome: 'succeeded', door: 'rest' });
  });

  it('takes every field, and an admin-scope token may create', async () => {
    const res = await call(
      'POST',
      '/clients',
      { name: 'Globex', code: 'GLX', locale: 'fr-FR', timesheetLayout: 'project', billingPolicy: 'free', billingMode: 'on_close' },
      { token: adminToken },
    );
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ code: 'GLX', locale: 'fr-FR', timesheetLayout: 'project', billingPolicy: 'free', billingMode: 'on_close' });
  });

  it('a code another client has is 409 client_code_taken', async () => {
    const res = await call('POST', '/clients', { name: 'Acme again', code: 'ACME' });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'conflict', details: { reason: 'client_code_taken', field: 'code' } });
  });

  it('malformed fields are 400: code, name, layout, mode (validation), policy (policy_format), locale (unknown_locale)', async () => {
    const cases: [unknown, string, string][] = [
      [{ name: 'X', code: 'a' }, 'validation', 'code'],
      [{ name: 'X', code: 'AB-C' }, 'validation', 'code'],
      [{ name: '   ', code: 'ABC' }, 'validation', 'name'],
      [{ name: 'X', code: 'ABC', timesheetLayout: 'pdf' }, 'validation', 'timesheetLayout'],
      [{ name: 'X', code: 'ABC', billingMode: 'monthly' }, 'validation', 'billingMode'],
      [{ name: 'X', code: 'ABC', billingPolicy: 'cheap' }, 'policy_format', 'billingPolicy'],
      [{ name: 'X', code: 'ABC', billingPolicy: null }, 'policy_format', 'billingPolicy'],
      [{ name: 'X', code: 'ABC', locale: 'not a locale' }, 'unknown_locale', 'locale'],
      [{ name: 'X', code: 'ABC', locale: 'xx-QQ' }, 'unknown_locale', 'locale'],
    ];
    for (const [body, reason, field] of cases) {
      const res = await call('POST', '/clients', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.details, JSON.stringify(body)).toMatchObject({ reason, field });
    }
  });

  it('a bank policy on a new client is 400 (unknown_bank, or bank_client_mismatch: the bank is another client’s)', async () => {
    expect(reasonOf(await call('POST', '/clients', { name: 'X', code: 'BNK1', billingPolicy: `bank:${randomUUID()}` }))).toBe('unknown_bank');
    const other = await makeClient(app.db.sql, ws);
    const bank = await makeBank(app.db.sql, ws, { clientId: other.id });
    expect(reasonOf(await call('POST', '/clients', { name: 'X', code: 'BNK2', billingPolicy: `bank:${bank.id}` }))).toBe('bank_client_mismatch');
  });

  it('refuses a member (403 admin_only), a token without the admin scope (403 missing_scope), and records the refusal', async () => {
    const m = await call('POST', '/clients', { name: 'X', code: 'MEM' }, { session: memberSession });
    expect(m.status).toBe(403);
    expect(reasonOf(m)).toBe('admin_only');
    const t = await call('POST', '/clients', { name: 'X', code: 'TOK' }, { token: writeToken });
    expect(t.status).toBe(403);
    expect(t.body.error.details).toMatchObject({ reason: 'missing_scope', scope: 'admin' });
    const [refused] = await app.db
      .sql`select count(*)::int as n from ops_audit where workspace_id = ${ws.id} and action = 'clients.create' and outcome = 'refused'`;
    expect(refused!.n).toBe(2);
  });
});

describe('GET /clients, GET /clients/{id}', () => {
  it('workspace users list the active clients by name, with a read token too; client users are 403 workspace_users_only', async () => {
    const res = await call('GET', '/clients', undefined, { session: memberSession });
    expect(res.status).toBe(200);
    const names = res.body.clients.map((c: { name: string }) => c.name);
    expect(names).toEqual([...names].sort((a: string, b: string) => a.toLowerCase().localeCompare(b.toLowerCase())));
    expect(names).toContain('Acme Ltd');
    const read = await makeToken(app.db.sql, ws, member, { scopes: ['read'] });
    expect((await call('GET', '/clients', undefined, { token: read.token })).status).toBe(200);
    const c = await call('GET', '/clients', undefined, { session: clientUserSession });
    expect(c.status).toBe(403);
    expect(reasonOf(c)).toBe('workspace_users_only');
  });

  it('archived=maybe is 400 validation', async () => {
    const res = await call('GET', '/clients?archived=maybe');
    expect(res.status).toBe(400);
    expect(res.body.error.details).toMatchObject({ reason: 'validation', field: 'archived' });
  });

  it('one client lists its users; unknown, malformed or another workspace’s id is 404/400', async () => {
    const acme = (await call('GET', '/clients')).body.clients.find((c: { code: string }) => c.code === 'ACME');
    const elevated = await makeUser(app.db.sql, ws, { role: 'client_elevated', clientId: acme.id, name: 'Bea Client' });
    const res = await call('GET', `/clients/${acme.id}`);
    expect(res.status).toBe(200);
    expect(res.body.users).toEqual([{ id: elevated.id, name: 'Bea Client', email: elevated.email, role: 'client_elevated' }]);
    const foreign = await makeClient(app.db.sql, await makeWorkspace(app.db.sql));
    for (const id of [randomUUID(), foreign.id]) {
      const r = await call('GET', `/clients/${id}`);
      expect(r.status).toBe(404);
      expect(reasonOf(r)).toBe('unknown_client');
    }
    const bad = await call('GET', '/clients/nope');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toMatchObject({ reason: 'bad_uuid', field: 'id' });
    expect(reasonOf(await call('GET', `/clients/${acme.id}`, undefined, { session: memberSession }))).toBe('admin_only');
  });
});

describe('PATCH /clients/{id} and archive', () => {
  let id: string;
  beforeAll(async () => {
    id = (await call('POST', '/clients', { name: 'Initech', code: 'INI' })).body.id;
  });

  it('changes the fields sent and keeps the others', async () => {
    const res = await call('PATCH', `/clients/${id}`, { locale: 'en-us', timesheetLayout: 'project', code: 'INIT' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Initech', code: 'INIT', locale: 'en-US', timesheetLayout: 'project', billingPolicy: 'paid' });
  });

  it('a bank of this client is a valid policy; another client’s is bank_client_mismatch; a taken code 409', async () => {
    const bank = await makeBank(app.db.sql, ws, { clientId: id });
    const ok = await call('PATCH', `/clients/${id}`, { billingPolicy: `bank:${bank.id}` });
    expect(ok.status).toBe(200);
    expect(ok.body.billingPolicy).toBe(`bank:${bank.id}`);
    const other = await makeClient(app.db.sql, ws);
    const foreignBank = await makeBank(app.db.sql, ws, { clientId: other.id });
    expect(reasonOf(await call('PATCH', `/clients/${id}`, { billingPolicy: `bank:${foreignBank.id}` }))).toBe('bank_client_mismatch');
    const taken = await call('PATCH', `/clients/${id}`, { code: 'ACME' });
    expect(taken.status).toBe(409);
    expect(reasonOf(taken)).toBe('client_code_taken');
    expect(reasonOf(await call('PATCH', `/clients/${id}`, { locale: '??' }))).toBe('unknown_locale');
    expect(reasonOf(await call('PATCH', `/clients/${randomUUID()}`, { name: 'Nobody' }))).toBe('unknown_client');
    expect(reasonOf(await call('PATCH', `/clients/${id}`, { name: 'X' }, { session: memberSession }))).toBe('admin_only');
  });

  it('archive leaves the client out of the default list, archived=true lists it, archiving again keeps the date, restore clears it', async () => {
    const a = await call('POST', `/clients/${id}/archive`, {});
    expect(a.status).toBe(200);
    expect(a.body.archivedAt).toEqual(expect.any(String));
    const again = await call('POST', `/clients/${id}/archive`, { archived: true });
    expect(again.body.archivedAt).toBe(a.body.archivedAt);
    const ids = async (q: string) => (await call('GET', `/clients${q}`)).body.clients.map((c: { id: string }) => c.id);
    expect(await ids('')).not.toContain(id);
    expect(await ids('?archived=true')).toEqual([id]);
    expect(await ids('?archived=all')).toContain(id);
    const r = await call('POST', `/clients/${id}/archive`, { archived: false });
    expect(r.body.archivedAt).toBeNull();
    expect(await ids('')).toContain(id);
    expect(reasonOf(await call('POST', `/clients/${randomUUID()}/archive`, {}))).toBe('unknown_client');
    expect((await call('POST', `/clients/${id}/archive`, { archived: 'yes' })).status).toBe(400);
  });
});

describe('GET/PUT /clients/{id}/recipients', () => {
  let id: string;
  let contact: Person;
  beforeAll(async () => {
    id = (await call('POST', '/clients', { name: 'Umbrella', code: 'UMB' })).body.id;
    contact = await makeUser(app.db.sql, ws, { role: 'client_elevated', clientId: id, name: 'Carla Contact' });
  });
  const put = (recipients: unknown, auth?: Auth) => call('PUT', `/clients/${id}/recipients`, { recipients }, auth);

  it('sets the recipients: an address, an opted-out one, and a client user (address and name from their account)', async () => {
    const res = await put([{ email: 'billing@umbrella.test', name: 'Billing' }, { email: 'cfo@umbrella.test', optedOut: true }, { identityId: contact.id }]);
    expect(res.status).toBe(200);
    expect(res.body.recipients).toEqual([
      { id: expect.any(String), email: 'billing@umbrella.test', name: 'Billing', optedOut: false, identityId: null },
      { id: expect.any(String), email: 'cfo@umbrella.test', name: null, optedOut: true, identityId: null },
      { id: expect.any(String), email: contact.email, name: 'Carla Contact', optedOut: false, identityId: contact.id },
    ]);
    expect((await call('GET', `/clients/${id}/recipients`)).body).toEqual(res.body);
  });

  it('replacing the set keeps the row of an address that stays (past deliveries still name it) and removes the others', async () => {
    const before = (await call('GET', `/clients/${id}/recipients`)).body.recipients;
    const res = await put([{ email: 'BILLING@umbrella.test', name: 'Accounts' }]);
    expect(res.status).toBe(200);
    expect(res.body.recipients).toEqual([{ id: before[0].id, email: 'BILLING@umbrella.test', name: 'Accounts', optedOut: false, identityId: null }]);
    expect((await put([])).body.recipients).toEqual([]);
  });

  it('anything but one bare address is 400 recipient_address naming the entry, and nothing changes', async () => {
    await put([{ email: 'keep@umbrella.test' }]);
    for (const email of ['a@x.test, b@x.test', 'Name <a@x.test>', 'a@x.test\r\nBcc: b@x.test', 'no-at-sign', '']) {
      const res = await put([{ email: 'ok@umbrella.test' }, { email }]);
      expect(res.status, email).toBe(400);
      expect(res.body.error.details, email).toMatchObject({ reason: 'recipient_address', field: 'recipients.1.email' });
    }
    const missing = await put([{ name: 'No address' }]);
    expect(missing.body.error.details).toMatchObject({ reason: 'recipient_address', field: 'recipients.0.email' });
    expect((await call('GET', `/clients/${id}/recipients`)).body.recipients.map((r: { email: string }) => r.email)).toEqual(['keep@umbrella.test']);
  });

  it('an address twice is 400 recipient_duplicate; someone not a user of this client is 400 recipient_not_client_user', async () => {
    const dup = await put([{ email: 'a@umbrella.test' }, { email: 'A@umbrella.test' }]);
    expect(dup.status).toBe(400);
    expect(dup.body.error.details).toMatchObject({ reason: 'recipient_duplicate', field: 'recipients.1.email' });
    for (const identityId of [member.id, randomUUID()]) {
      const res = await put([{ identityId }]);
      expect(res.status).toBe(400);
      expect(res.body.error.details).toMatchObject({ reason: 'recipient_not_client_user', field: 'recipients.0.identityId' });
    }
  });

  it('malformed bodies are 400 validation; over 50 recipients too; unknown client 404; members 403 admin_only', async () => {
    expect(reasonOf(await call('PUT', `/clients/${id}/recipients`, {}))).toBe('validation');
    expect(reasonOf(await put([{ email: 'a@b.test', optedOut: 'no' }]))).toBe('validation');
    const many = Array.from({ length: 51 }, (_, i) => ({ email: `r${i}@umbrella.test` }));
    expect(reasonOf(await put(many))).toBe('validation');
    const unknown = await call('PUT', `/clients/${randomUUID()}/recipients`, { recipients: [] });
    expect(unknown.status).toBe(404);
    expect(reasonOf(unknown)).toBe('unknown_client');
    expect(reasonOf(await call('GET', `/clients/${randomUUID()}/recipients`))).toBe('unknown_client');
    expect(reasonOf(await put([], { session: memberSession }))).toBe('admin_only');
    expect(reasonOf(await call('GET', `/clients/${id}/recipients`, undefined, { token: writeToken }))).toBe('missing_scope');
    expect((await put([{ email: 'tok@umbrella.test' }], { token: adminToken })).status).toBe(200);
  });
});
