import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type TestApp } from './helpers/app.ts';
import {
  makeBillingRecipient,
  makeBillingRun,
  makeClient,
  makeDocument,
  makeDocumentGrant,
  makePeriod,
  makeProject,
  makeToken,
  makeUser,
  makeWorkspace,
  type Person,
  type Workspace,
} from './helpers/factories.ts';

let app: TestApp;
let ws: Workspace;
let acme: { id: string; code: string };
let globex: { id: string; code: string };
let shop: { id: string; key: string };
let blog: { id: string; key: string };
let intranet: { id: string; key: string };
let run1: { id: string };
let run2: { id: string };
const D: Record<string, { id: string; number: string }> = {};

const get = (token: string, query = '') => app.call('GET', `/api/w/${ws.slug}/documents${query}`, { token });
const numbers = (body: { documents: { number: string; format: string }[] }) => body.documents.map((d) => `${d.number}.${d.format}`).sort();
const tokenOf = async (person: Person, opts: Parameters<typeof makeToken>[3] = {}) => (await makeToken(app.db.sql, ws, person, opts)).token;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  acme = await makeClient(sql, ws, { name: 'Acme' });
  globex = await makeClient(sql, ws, { name: 'Globex' });
  shop = await makeProject(sql, ws, { billingClientId: acme.id });
  blog = await makeProject(sql, ws, { billingClientId: acme.id });
  intranet = await makeProject(sql, ws, { billingClientId: globex.id });
  const jan = await makePeriod(sql, ws, { start: '2025-01-01', end: '2025-01-31', closed: true });
  const feb = await makePeriod(sql, ws, { start: '2025-02-01', end: '2025-02-28', closed: true });
  run1 = await makeBillingRun(sql, ws, { periodId: jan.id });
  run2 = await makeBillingRun(sql, ws, { periodId: feb.id });
  const doc = (key: string, o: Omit<Parameters<typeof makeDocument>[2], 'number'>) =>
    makeDocument(sql, ws, { number: key.toUpperCase(), ...o }).then((d) => (D[key] = d));
  await doc('acme-1', {
    runId: run1.id,
    clientId: acme.id,
    deliveries: [
      { email: 'ap@acme.test', state: 'sent' },
      { email: null, state: 'skipped' },
    ],
  });
  await doc('acme-1', { runId: run1.id, clientId: acme.id, format: 'csv' });
  await doc('shop-1', { runId: run1.id, clientId: acme.id, projectId: shop.id });
  await doc('blog-1', { runId: run1.id, clientId: acme.id, projectId: blog.id, voided: true });
  await doc('globex-1', { runId: run1.id, clientId: globex.id });
  await doc('intranet-1', { runId: run1.id, clientId: globex.id, projectId: intranet.id, redacted: true });
  await doc('intranet-2', { runId: run2.id, clientId: globex.id, projectId: intranet.id, version: 2, periodStart: '2025-02-01' });
});
afterAll(() => app.close());

describe('GET /documents', () => {
  it('owner and admin: every document (scope all), newest first, in the contract shape', async () => {
    const owner = await makeUser(app.db.sql, ws, { role: 'owner' });
    const res = await get(await tokenOf(owner));
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('all');
    expect(res.body.documents).toHaveLength(7);
    expect(res.body.documents[0].number).toBe('INTRANET-2');
    const acme1 = res.body.documents.find((d: any) => d.number === 'ACME-1' && d.format === 'html');
    expect(acme1).toEqual({
      id: expect.any(String),
      runId: run1.id,
      number: 'ACME-1',
      scope: 'combined',
      projectId: null,
      projectName: null,
      clientId: acme.id,
      clientName: 'Acme',
      periodStart: '2025-01-01',
      format: 'html',
      version: 1,
      locale: 'en-GB',
      checksum: 'sha-ACME-1',
      bytes: '<p>ACME-1</p>'.length,
      voided: false,
      redacted: false,
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      deliveries: [
        { id: expect.any(String), kind: 'timesheet', email: 'ap@acme.test', state: 'sent', detail: null, attemptedAt: null },
        { id: expect.any(String), kind: 'timesheet', email: null, state: 'skipped', detail: null, attemptedAt: null },
      ],
    });
    expect(res.body.documents.find((d: any) => d.number === 'BLOG-1')).toMatchObject({ voided: true, scope: 'project', projectId: blog.id });
    expect(res.body.documents.find((d: any) => d.number === 'INTRANET-1')).toMatchObject({ redacted: true });
    const admin = await makeUser(app.db.sql, ws, { role: 'admin' });
    expect((await get(await tokenOf(admin))).body.scope).toBe('all');
  });

  it('a workspace user with nothing to download: 200, empty, scope none', async () => {
    const member = await makeUser(app.db.sql, ws);
    const res = await get(await tokenOf(member));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ documents: [], scope: 'none' });
  });

  it('a project manager: the project-scoped documents of their projects (scope projects), never a combined one', async () => {
    const pm = await makeUser(app.db.sql, ws);
    await app.db
      .sql`insert into project_memberships (workspace_id, project_id, identity_id, access, is_manager) values (${ws.id}, ${shop.id}, ${pm.id}, 'full', true)`;
    await app.db
      .sql`insert into project_memberships (workspace_id, project_id, identity_id, access, is_manager) values (${ws.id}, ${blog.id}, ${pm.id}, 'full', false)`;
    const res = await get(await tokenOf(pm));
    expect(res.body.scope).toBe('projects');
    expect(numbers(res.body)).toEqual(['SHOP-1.html']);
  });

  it('a document grant: every document of that client (scope client), plus managed projects', async () => {
    const granted = await makeUser(app.db.sql, ws);
    await makeDocumentGrant(app.db.sql, ws, globex.id, granted);
    await app.db
      .sql`insert into project_memberships (workspace_id, project_id, identity_id, access, is_manager) values (${ws.id}, ${shop.id}, ${granted.id}, 'limited', true)`;
    const res = await get(await tokenOf(granted));
    expect(res.body.scope).toBe('client');
    expect(numbers(res.body)).toEqual(['GLOBEX-1.html', 'INTRANET-1.html', 'INTRANET-2.html', 'SHOP-1.html']);
  });

  it("a client user: their client's documents only as a billing contact with a full login", async () => {
    const sql = app.db.sql;
    const contact = await makeUser(sql, ws, { role: 'client', clientId: acme.id });
    await makeBillingRecipient(sql, acme.id, contact);
    const res = await get(await tokenOf(contact));
    expect(res.body.scope).toBe('client');
    expect(numbers(res.body)).toEqual(['ACME-1.csv', 'ACME-1.html', 'BLOG-1.html', 'SHOP-1.html']);

    const notListed = await makeUser(sql, ws, { role: 'client_elevated', clientId: acme.id });
    expect((await get(await tokenOf(notListed))).body).toEqual({ documents: [], scope: 'none' });

    const noLogin = await makeUser(sql, ws, { role: 'client', clientId: acme.id });
    await makeBillingRecipient(sql, acme.id, noLogin);
    await sql`update identities set password_hash = null where id = ${noLogin.id}`;
    expect((await get(await tokenOf(noLogin))).body).toEqual({ documents: [], scope: 'none' });

    const elevated = await makeUser(sql, ws, { role: 'client_elevated', clientId: acme.id });
    await makeBillingRecipient(sql, acme.id, elevated);
    await sql`update identities set password_hash = null where id = ${elevated.id}`;
    expect((await get(await tokenOf(elevated))).body.scope).toBe('client');

    // listed for another client: not a contact of their own
    const elsewhere = await makeUser(sql, ws, { role: 'client', clientId: globex.id });
    await makeBillingRecipient(sql, acme.id, elsewhere);
    expect((await get(await tokenOf(elsewhere))).body).toEqual({ documents: [], scope: 'none' });
  });

  it('a token restricted to projects: only project-scoped documents of those projects (scope projects)', async () => {
    const owner = await makeUser(app.db.sql, ws, { role: 'owner' });
    const res = await get(await tokenOf(owner, { projectIds: [intranet.id, blog.id] }));
    expect(res.body.scope).toBe('projects');
    expect(numbers(res.body)).toEqual(['BLOG-1.html', 'INTRANET-1.html', 'INTRANET-2.html']);
    const member = await makeUser(app.db.sql, ws);
    expect((await get(await tokenOf(member, { projectIds: [shop.id] }))).body).toEqual({ documents: [], scope: 'none' });
  });

  it('filters by client and run; an unknown id only filters; a malformed one is 400', async () => {
    const owner = await makeUser(app.db.sql, ws, { role: 'owner' });
    const t = await tokenOf(owner);
    expect(numbers((await get(t, `?clientId=${globex.id}`)).body)).toEqual(['GLOBEX-1.html', 'INTRANET-1.html', 'INTRANET-2.html']);
    expect(numbers((await get(t, `?runId=${run2.id}`)).body)).toEqual(['INTRANET-2.html']);
    expect(numbers((await get(t, `?clientId=${acme.id}&runId=${run2.id}`)).body)).toEqual([]);
    expect((await get(t, '?clientId=00000000-0000-4000-8000-000000000000')).body).toEqual({ documents: [], scope: 'all' });
    const bad = await get(t, '?clientId=acme');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid', details: { reason: 'validation', field: 'clientId' } });
    expect((await get(t, '?runId=1')).status).toBe(400);
  });

  it('needs the read scope; a browser session works too; no credential is 401', async () => {
    const owner = await makeUser(app.db.sql, ws, { role: 'owner' });
    const writeOnly = await get(await tokenOf(owner, { scopes: ['write'] }));
    expect(writeOnly.status).toBe(403);
    expect(writeOnly.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'missing_scope', scope: 'read' } });
    const session = await login(app, owner.email, owner.password);
    const res = await app.call('GET', `/api/w/${ws.slug}/documents`, { session });
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('all');
    expect((await app.call('GET', `/api/w/${ws.slug}/documents`)).status).toBe(401);
  });
});
