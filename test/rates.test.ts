import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makeCategory, makeProject, makeToken, makeUser, makeWorkspace, type Workspace } from './helpers/factories.ts';

/** GET and PUT /rates, and the client's currency (issue 23). */

let app: TestApp;
let ws: Workspace;
let other: Workspace;
let session: SessionCookie;
let memberSession: SessionCookie;
let adminToken: string;
let writeToken: string;
let dev: { id: string };
let design: { id: string };
let clientId: string;
let projectId: string;
let otherCategory: { id: string };

const W = () => `/api/w/${ws.slug}`;
const call = (method: string, path: string, body?: unknown, auth: { session?: SessionCookie; token?: string } = { session }) =>
  app.call(method, `${W()}${path}`, { ...auth, body });
const reasonOf = (res: { body: any }) => res.body?.error?.details?.reason;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  other = await makeWorkspace(sql);
  const owner = await makeUser(sql, ws, { role: 'owner' });
  const member = await makeUser(sql, ws, { role: 'member' });
  session = await login(app, owner.email, owner.password);
  memberSession = await login(app, member.email, member.password);
  adminToken = (await makeToken(sql, ws, owner, { scopes: ['admin'] })).token;
  writeToken = (await makeToken(sql, ws, owner, { scopes: ['read', 'write'] })).token;
  dev = await makeCategory(sql, ws, 'Developer');
  design = await makeCategory(sql, ws, 'Designer');
  otherCategory = await makeCategory(sql, other, 'Developer');
  clientId = (await sql<{ id: string }[]>`insert into clients (workspace_id, name, code) values (${ws.id}, 'Acme', 'ACME') returning id`)[0]!.id;
  projectId = (await makeProject(sql, ws, { key: 'WEB', billingClientId: clientId })).id;
});
afterAll(() => app.close());

describe('PUT /rates', () => {
  it('replaces the table; GET /rates reads it back in order; audited', async () => {
    const table = [
      { categoryId: dev.id, currency: 'eur', hourlyRateMinor: 9500, effectiveFrom: '2026-01-01' },
      { categoryId: dev.id, currency: 'EUR', hourlyRateMinor: 10500, effectiveFrom: '2026-10-15' },
      { categoryId: dev.id, clientId, currency: 'EUR', hourlyRateMinor: 12000, effectiveFrom: '2026-01-01' },
      { categoryId: dev.id, projectId, currency: 'USD', hourlyRateMinor: 15000, effectiveFrom: '2026-01-01' },
      { categoryId: design.id, currency: 'JPY', hourlyRateMinor: 12000, effectiveFrom: '2026-01-01' },
    ];
    const res = await call('PUT', '/rates', { rates: table });
    expect(res.status).toBe(200);
    expect(res.body.rates).toHaveLength(5);
    expect(res.body.rates[0]).toMatchObject({ categoryId: design.id, currency: 'JPY', clientId: null, projectId: null });
    expect(res.body.rates.find((r: any) => r.hourlyRateMinor === 9500)).toMatchObject({ currency: 'EUR', effectiveFrom: '2026-01-01' });
    const got = await call('GET', '/rates');
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
    const [audit] = await app.db.sql`select detail, door from ops_audit where workspace_id = ${ws.id} and action = 'rates.replace' order by id desc limit 1`;
    expect(audit).toMatchObject({ detail: '5 rates', door: 'rest' });
    // a second PUT replaces, never appends
    const again = await call('PUT', '/rates', { rates: [table[0]] }, { token: adminToken });
    expect([again.status, again.body.rates.length]).toEqual([200, 1]);
  });

  it('refuses unknown categories, clients and projects (another workspace’s too), naming the row', async () => {
    const row = { categoryId: dev.id, currency: 'EUR', hourlyRateMinor: 100, effectiveFrom: '2026-01-01' };
    const before = (await call('GET', '/rates')).body;
    const cat = await call('PUT', '/rates', { rates: [row, { ...row, categoryId: otherCategory.id }] });
    expect([cat.status, reasonOf(cat), cat.body.error.details.field]).toEqual([404, 'unknown_category', 'rates.1.categoryId']);
    const client = await call('PUT', '/rates', { rates: [{ ...row, clientId: '00000000-0000-4000-8000-000000000000' }] });
    expect([client.status, reasonOf(client)]).toEqual([404, 'unknown_client']);
    const project = await call('PUT', '/rates', { rates: [{ ...row, projectId: '00000000-0000-4000-8000-000000000000' }] });
    expect([project.status, reasonOf(project)]).toEqual([404, 'unknown_project']);
    expect((await call('GET', '/rates')).body).toEqual(before);
  });

  it('refuses two rates of one scope, category and currency from the same day (409 duplicate_rate)', async () => {
    const row = { categoryId: dev.id, clientId, currency: 'EUR', hourlyRateMinor: 100, effectiveFrom: '2026-03-01' };
    const res = await call('PUT', '/rates', { rates: [row, { ...row, currency: 'USD' }, { ...row, hourlyRateMinor: 200 }] });
    expect([res.status, reasonOf(res), res.body.error.details.index, res.body.error.details.duplicateOf]).toEqual([409, 'duplicate_rate', 2, 0]);
  });

  it('refuses bad input with 400: currency, negative or fractional rate, bad date, client and project together', async () => {
    const row = { categoryId: dev.id, currency: 'EUR', hourlyRateMinor: 100, effectiveFrom: '2026-01-01' };
    for (const bad of [
      { ...row, currency: 'EURO' },
      { ...row, currency: 'XYZ' },
      { ...row, hourlyRateMinor: -1 },
      { ...row, hourlyRateMinor: 1.5 },
      { ...row, hourlyRateMinor: 50_000_001 },
      { ...row, effectiveFrom: '2026-02-30' },
      { ...row, categoryId: 'nope' },
      { ...row, clientId, projectId },
    ]) {
      const res = await call('PUT', '/rates', { rates: [bad] });
      expect([res.status, reasonOf(res)], JSON.stringify(bad)).toEqual([400, 'validation']);
    }
    expect((await call('PUT', '/rates', {})).status).toBe(400);
  });

  it('is Owner/Admin only: a member 403 admin_only, a token without the admin scope 403', async () => {
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { rates: [] }],
    ] as const) {
      const member = await call(method, '/rates', body, { session: memberSession });
      expect([member.status, reasonOf(member)]).toEqual([403, 'admin_only']);
      const token = await call(method, '/rates', body, { token: writeToken });
      expect(token.status).toBe(403);
      expect((await call(method, '/rates', body, { token: adminToken })).status).toBe(200);
    }
  });
});

describe('the client’s currency', () => {
  it('defaults to EUR, is set by POST and PATCH /clients, upper-cased; anything not ISO 4217 is 400 bad_currency', async () => {
    expect((await call('GET', `/clients/${clientId}`)).body.currency).toBe('EUR');
    const made = await call('POST', '/clients', { name: 'Yamato', code: 'YMT', currency: 'jpy' });
    expect([made.status, made.body.currency]).toEqual([201, 'JPY']);
    const patched = await call('PATCH', `/clients/${clientId}`, { currency: 'usd' });
    expect([patched.status, patched.body.currency]).toEqual([200, 'USD']);
    const bad = await call('PATCH', `/clients/${clientId}`, { currency: 'XXXX' });
    expect([bad.status, reasonOf(bad)]).toEqual([400, 'bad_currency']);
    const badNew = await call('POST', '/clients', { name: 'Nope', code: 'NOPE', currency: 'ABC' });
    expect([badNew.status, reasonOf(badNew)]).toEqual([400, 'bad_currency']);
    await call('PATCH', `/clients/${clientId}`, { currency: 'EUR' });
  });
});
