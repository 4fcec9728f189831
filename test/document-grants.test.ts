import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makeBillingRun, makeClient, makeDocument, makePeriod, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

/** GET/PUT /clients/{id}/document-grants: Owner/Admin from a browser session. */

let app: TestApp;
let ws: Workspace;
let owner: Person;
let session: SessionCookie;
let acme: { id: string };
let globex: { id: string };
let people: Record<'admin' | 'anna' | 'bert' | 'agent' | 'client', Person>;

const path = (clientId: string) => `/api/w/${ws.slug}/clients/${clientId}/document-grants`;
const list = (clientId: string, auth: { session?: SessionCookie; token?: string } = { session }) => app.call('GET', path(clientId), auth);
const put = (clientId: string, body: unknown, auth: { session?: SessionCookie; token?: string } = { session }) =>
  app.call('PUT', path(clientId), { ...auth, body });
const entry = (p: Person, name: string) => ({ identityId: p.id, name, email: p.email });

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  owner = await makeUser(sql, ws, { role: 'owner', name: 'Olga Owner' });
  session = await login(app, owner.email, owner.password);
  acme = await makeClient(sql, ws, { name: 'Acme' });
  globex = await makeClient(sql, ws, { name: 'Globex' });
  people = {
    admin: await makeUser(sql, ws, { role: 'admin', name: 'Adam Admin' }),
    anna: await makeUser(sql, ws, { role: 'member', name: 'Anna Member' }),
    bert: await makeUser(sql, ws, { role: 'member', name: 'bert member' }),
    agent: await makeUser(sql, ws, { role: 'agent', name: 'Build Agent' }),
    client: await makeUser(sql, ws, { role: 'client_elevated', clientId: acme.id, name: 'Carla Client' }),
  };
});
afterAll(() => app.close());

describe('GET /clients/{id}/document-grants', () => {
  it('no grants yet: the candidates are the members and agents, by name; Owner, Admin and client users are never candidates', async () => {
    const res = await list(acme.id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      grants: [],
      candidates: [
        entry(people.anna, 'Anna Member'),
        entry(people.bert, 'bert member'),
        { identityId: people.agent.id, name: 'Build Agent', email: people.agent.email },
      ],
    });
  });
});

describe('PUT /clients/{id}/document-grants', () => {
  it('grants idempotently; the grant is listed with its id and the person leaves the candidates; it opens the client documents', async () => {
    expect(await put(acme.id, { identityId: people.anna.id, granted: true })).toMatchObject({ status: 200, body: { ok: true } });
    expect(await put(acme.id, { identityId: people.anna.id, granted: true })).toMatchObject({ status: 200, body: { ok: true } });
    const res = await list(acme.id);
    expect(res.body.grants).toEqual([{ id: expect.any(String), ...entry(people.anna, 'Anna Member') }]);
    expect(res.body.candidates.map((c: { identityId: string }) => c.identityId)).toEqual([people.bert.id, people.agent.id]);
    const [row] = await app.db.sql<{ grantedBy: string }[]>`
      select granted_by as "grantedBy" from document_grants where client_id = ${acme.id} and identity_id = ${people.anna.id}`;
    expect(row!.grantedBy).toBe(owner.id);
    // a grant is per client: Globex still offers Anna
    expect((await list(globex.id)).body).toMatchObject({ grants: [], candidates: expect.arrayContaining([entry(people.anna, 'Anna Member')]) });

    // what the grant is for: Anna now downloads Acme's documents
    const sql = app.db.sql;
    const period = await makePeriod(sql, ws, { start: '2025-01-01', end: '2025-01-31', closed: true });
    const run = await makeBillingRun(sql, ws, { periodId: period.id });
    const doc = await makeDocument(sql, ws, { runId: run.id, clientId: acme.id, number: 'ACME-2025-0001' });
    const annaToken = (await makeToken(sql, ws, people.anna)).token;
    expect((await app.call('GET', `/api/w/${ws.slug}/documents/${doc.id}/download`, { token: annaToken })).status).toBe(200);
    const bertToken = (await makeToken(sql, ws, people.bert)).token;
    expect((await app.call('GET', `/api/w/${ws.slug}/documents/${doc.id}/download`, { token: bertToken })).status).toBe(403);
  });

  it('revokes idempotently; the person is a candidate again and loses the documents', async () => {
    await put(acme.id, { identityId: people.bert.id, granted: true });
    expect(await put(acme.id, { identityId: people.bert.id, granted: false })).toMatchObject({ status: 200, body: { ok: true } });
    expect(await put(acme.id, { identityId: people.bert.id, granted: false })).toMatchObject({ status: 200, body: { ok: true } });
    const res = await list(acme.id);
    expect(res.body.grants.map((g: { identityId: string }) => g.identityId)).not.toContain(people.bert.id);
    expect(res.body.candidates.map((c: { identityId: string }) => c.identityId)).toContain(people.bert.id);
  });

  it('an agent and an admin may hold a grant (an admin is never offered: they see everything already)', async () => {
    expect((await put(globex.id, { identityId: people.agent.id, granted: true })).status).toBe(200);
    expect((await put(globex.id, { identityId: people.admin.id, granted: true })).status).toBe(200);
    const res = await list(globex.id);
    expect(res.body.grants.map((g: { name: string }) => g.name)).toEqual(['Adam Admin', 'Build Agent']);
    expect(res.body.candidates.map((c: { name: string }) => c.name)).toEqual(['Anna Member', 'bert member']);
  });

  it('a client user or a stranger is 404 unknown_person, and nothing is written', async () => {
    const client = await put(acme.id, { identityId: people.client.id, granted: true });
    expect(client.status).toBe(404);
    expect(client.body.error).toMatchObject({ code: 'not_found', details: { reason: 'unknown_person', identityId: people.client.id } });
    const stranger = randomUUID();
    expect((await put(acme.id, { identityId: stranger, granted: true })).body.error).toMatchObject({
      details: { reason: 'unknown_person', identityId: stranger },
    });
    expect((await put(acme.id, { identityId: stranger, granted: false })).body.error).toMatchObject({ details: { reason: 'unknown_person' } });
    const [n] = await app.db.sql<
      { n: number }[]
    >`select count(*)::int as n from document_grants where identity_id = any(${[people.client.id, stranger]}::uuid[])`;
    expect(n!.n).toBe(0);
  });

  it('the grant of someone who has left the workspace can still be revoked', async () => {
    const leaver = await makeUser(app.db.sql, ws, { role: 'member', name: 'Lea Leaver' });
    await put(acme.id, { identityId: leaver.id, granted: true });
    await app.db.sql`delete from memberships where workspace_id = ${ws.id} and identity_id = ${leaver.id}`;
    expect((await list(acme.id)).body.grants.map((g: { name: string }) => g.name)).toContain('Lea Leaver');
    expect(await put(acme.id, { identityId: leaver.id, granted: false })).toMatchObject({ status: 200, body: { ok: true } });
    expect((await list(acme.id)).body.grants.map((g: { name: string }) => g.name)).not.toContain('Lea Leaver');
    // and cannot be granted again
    expect((await put(acme.id, { identityId: leaver.id, granted: true })).status).toBe(404);
  });
});

describe('refusals', () => {
  it('a token is 403 session_required, even the owner’s', async () => {
    const token = (await makeToken(app.db.sql, ws, owner)).token;
    for (const res of [await list(acme.id, { token }), await put(acme.id, { identityId: people.anna.id, granted: false }, { token })]) {
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'session_required' } });
    }
  });

  it('a member session is 403 admin_only; an admin session may', async () => {
    const member = await login(app, people.anna.email, people.anna.password);
    for (const res of [await list(acme.id, { session: member }), await put(acme.id, { identityId: people.anna.id, granted: true }, { session: member })]) {
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'admin_only' } });
    }
    const admin = await login(app, people.admin.email, people.admin.password);
    expect((await list(acme.id, { session: admin })).status).toBe(200);
  });

  it('an unknown client, or one of another workspace, is 404 unknown_client; a malformed id 400 bad_uuid', async () => {
    const other = await makeClient(app.db.sql, await makeWorkspace(app.db.sql));
    for (const id of [randomUUID(), other.id]) {
      for (const res of [await list(id), await put(id, { identityId: people.anna.id, granted: true })]) {
        expect(res.status).toBe(404);
        expect(res.body.error).toMatchObject({ code: 'not_found', details: { reason: 'unknown_client' } });
      }
    }
    const bad = await list('acme');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid', details: { reason: 'bad_uuid', field: 'id' } });
  });

  it('a body without a UUID identityId or a boolean granted is 400 validation naming the field', async () => {
    const noUuid = await put(acme.id, { identityId: 'anna', granted: true });
    expect(noUuid.status).toBe(400);
    expect(noUuid.body.error).toMatchObject({ code: 'invalid', details: { reason: 'validation', field: 'identityId' } });
    const noFlag = await put(acme.id, { identityId: people.anna.id, granted: 'yes' });
    expect(noFlag.body.error).toMatchObject({ code: 'invalid', details: { reason: 'validation', field: 'granted' } });
    expect((await put(acme.id, { identityId: people.anna.id })).body.error).toMatchObject({ details: { field: 'granted' } });
  });
});
