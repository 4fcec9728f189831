import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import {
  makeBank,
  makeCategory,
  makeClient,
  makePeriod,
  makeProject,
  makeTicket,
  makeTimeEntry,
  makeToken,
  makeUser,
  makeWorkspace,
  type Person,
  type Workspace,
} from './helpers/factories.ts';

/**
 * Projects and memberships through REST (issue 22): POST /projects, GET/PATCH /projects/{id},
 * POST /projects/{id}/archive, GET /projects/{id}/members, PUT/DELETE /projects/{id}/members/{identityId}.
 */

let app: TestApp;
let ws: Workspace;
let owner: Person;
let member: Person;
let other: Person;
let clientUser: Person;
let session: SessionCookie;
let memberSession: SessionCookie;
let clientSession: SessionCookie;
let adminToken: string;
let writeToken: string;
let acme: { id: string };
let globex: { id: string };

type Auth = { session?: SessionCookie; token?: string };
const W = () => `/api/w/${ws.slug}`;
const call = (method: string, path: string, body?: unknown, auth: Auth = { session }) => app.call(method, `${W()}${path}`, { ...auth, body });
const reasonOf = (res: { body: any }) => res.body?.error?.details?.reason;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  owner = await makeUser(sql, ws, { role: 'owner' });
  member = await makeUser(sql, ws, { role: 'member', name: 'Mia Member' });
  other = await makeUser(sql, ws, { role: 'agent', name: 'Otto Agent' });
  acme = await makeClient(sql, ws, { name: 'Acme' });
  globex = await makeClient(sql, ws, { name: 'Globex' });
  clientUser = await makeUser(sql, ws, { role: 'client_elevated', clientId: acme.id });
  session = await login(app, owner.email, owner.password);
  memberSession = await login(app, member.email, member.password);
  clientSession = await login(app, clientUser.email, clientUser.password);
  adminToken = (await makeToken(sql, ws, owner, { scopes: ['admin'] })).token;
  writeToken = (await makeToken(sql, ws, owner, { scopes: ['read', 'write'] })).token;
});
afterAll(() => app.close());

describe('POST /projects', () => {
  it('creates a project: 201, key upper-cased, collaborators, audited; its first ticket is KEY-1', async () => {
    const res = await call('POST', '/projects', { key: 'web', name: ' Website ', billingClientId: acme.id, collaboratorIds: [globex.id] });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      key: 'WEB',
      name: 'Website',
      billingClientId: acme.id,
      billingPolicy: null,
      billingMode: null,
      collaboratorIds: [globex.id],
      formerKeys: [],
      archivedAt: null,
      createdAt: expect.any(String),
    });
    const t = await call('POST', '/tickets', { projectId: res.body.id, title: 'First' });
    expect(t.status).toBe(201);
    expect(t.body.humanId).toBe('WEB-1');
    const [audit] = await app.db.sql`select target, outcome, door from ops_audit where workspace_id = ${ws.id} and action = 'projects.create'`;
    expect(audit).toMatchObject({ target: 'web', outcome: 'succeeded', door: 'rest' });
  });

  it('an admin-scope token may create; a collaborating client’s elevated user then sees the project in GET /projects', async () => {
    const res = await call(
      'POST',
      '/projects',
      { key: 'APP', name: 'App', billingClientId: globex.id, collaboratorIds: [acme.id], billingMode: 'on_close' },
      { token: adminToken },
    );
    expect(res.status).toBe(201);
    const list = await app.call('GET', `${W()}/projects`, { session: clientSession });
    expect(list.status).toBe(200);
    expect(list.body.projects.map((p: { key: string }) => p.key)).toEqual(['APP', 'WEB']);
  });

  it('a key taken is 409 key_taken; INBOX is 400 key_reserved; malformed keys 400 validation', async () => {
    const taken = await call('POST', '/projects', { key: 'WEB', name: 'Again' });
    expect(taken.status).toBe(409);
    expect(taken.body.error.details).toMatchObject({ reason: 'key_taken', field: 'key' });
    const inbox = await call('POST', '/projects', { key: 'inbox', name: 'Inbox' });
    expect(inbox.status).toBe(400);
    expect(inbox.body.error.details).toMatchObject({ reason: 'key_reserved', field: 'key' });
    for (const key of ['A', '1AB', 'AB-C', 'ABCDEFGHIJK', '']) {
      const res = await call('POST', '/projects', { key, name: 'Bad' });
      expect(res.status, key).toBe(400);
      expect(res.body.error.details, key).toMatchObject({ reason: 'validation', field: 'key' });
    }
  });

  it('clients: unknown 404 unknown_client (billing or collaborator), archived 409 client_archived, billing client as collaborator 400', async () => {
    const unknown = await call('POST', '/projects', { key: 'UNK', name: 'X', billingClientId: randomUUID() });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.details).toMatchObject({ reason: 'unknown_client', field: 'billingClientId' });
    const foreign = await makeClient(app.db.sql, await makeWorkspace(app.db.sql));
    const col = await call('POST', '/projects', { key: 'UNK', name: 'X', collaboratorIds: [acme.id, foreign.id] });
    expect(col.status).toBe(404);
    expect(col.body.error.details).toMatchObject({ reason: 'unknown_client', field: 'collaboratorIds.1' });
    const same = await call('POST', '/projects', { key: 'UNK', name: 'X', billingClientId: acme.id, collaboratorIds: [acme.id] });
    expect(same.status).toBe(400);
    expect(reasonOf(same)).toBe('collaborator_is_billing_client');
    const archived = await makeClient(app.db.sql, ws, { name: 'Gone' });
    expect((await call('POST', `/clients/${archived.id}/archive`, {})).status).toBe(200);
    const arch = await call('POST', '/projects', { key: 'UNK', name: 'X', billingClientId: archived.id });
    expect(arch.status).toBe(409);
    expect(arch.body.error.details).toMatchObject({ reason: 'client_archived', field: 'billingClientId' });
  });

  it('policy: malformed 400 policy_format, unknown bank 400 unknown_bank, another client’s bank 400 bank_client_mismatch, own bank 201', async () => {
    expect(reasonOf(await call('POST', '/projects', { key: 'POL', name: 'X', billingPolicy: 'sometimes' }))).toBe('policy_format');
    expect(reasonOf(await call('POST', '/projects', { key: 'POL', name: 'X', billingClientId: acme.id, billingPolicy: `bank:${randomUUID()}` }))).toBe(
      'unknown_bank',
    );
    const bank = await makeBank(app.db.sql, ws, { clientId: globex.id });
    expect(reasonOf(await call('POST', '/projects', { key: 'POL', name: 'X', billingClientId: acme.id, billingPolicy: `bank:${bank.id}` }))).toBe(
      'bank_client_mismatch',
    );
    const ok = await call('POST', '/projects', { key: 'POL', name: 'X', billingClientId: globex.id, billingPolicy: `bank:${bank.id}` });
    expect(ok.status).toBe(201);
    expect(ok.body.billingPolicy).toBe(`bank:${bank.id}`);
  });

  it('refusals: member 403 admin_only, token without admin 403 missing_scope, client user 403 admin_only', async () => {
    expect(reasonOf(await call('POST', '/projects', { key: 'NOPE', name: 'X' }, { session: memberSession }))).toBe('admin_only');
    expect(reasonOf(await call('POST', '/projects', { key: 'NOPE', name: 'X' }, { token: writeToken }))).toBe('missing_scope');
    expect(reasonOf(await call('POST', '/projects', { key: 'NOPE', name: 'X' }, { session: clientSession }))).toBe('admin_only');
  });
});

describe('GET /projects', () => {
  it('names the projects the caller may address, by key; archived ones only when asked (archived=true|all); a bad value 400', async () => {
    const p = (await call('POST', '/projects', { key: 'OLD', name: 'Old one' })).body;
    await call('POST', `/projects/${p.id}/archive`, {});
    const keys = async (q = '', auth: Auth = { session }) =>
      (await call('GET', `/projects${q}`, undefined, auth)).body.projects.map((x: { key: string }) => x.key);
    expect(await keys()).not.toContain('OLD');
    expect(await keys('?archived=true')).toEqual(['OLD']);
    expect(await keys('?archived=all')).toContain('OLD');
    const [item] = (await call('GET', '/projects?archived=true')).body.projects;
    expect(item).toEqual({ id: p.id, key: 'OLD', name: 'Old one', billingClient: null, membership: null, archivedAt: expect.any(String) });
    // a member sees only their own projects (none yet), with a read token too
    const read = await makeToken(app.db.sql, ws, member, { scopes: ['read'] });
    expect(await keys('?archived=all', { token: read.token })).toEqual([]);
    const bad = await call('GET', '/projects?archived=maybe');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toMatchObject({ reason: 'validation', field: 'archived' });
  });
});

describe('GET/PATCH /projects/{id}, archive', () => {
  let id: string;
  beforeAll(async () => {
    id = (await call('POST', '/projects', { key: 'OPS', name: 'Operations', billingClientId: acme.id })).body.id;
  });

  it('Owner/Admin read any project; a member only one they belong to (else 404 unknown_project); client users 403', async () => {
    expect((await call('GET', `/projects/${id}`)).body).toMatchObject({ id, key: 'OPS' });
    const hidden = await call('GET', `/projects/${id}`, undefined, { session: memberSession });
    expect(hidden.status).toBe(404);
    expect(reasonOf(hidden)).toBe('unknown_project');
    expect((await call('PUT', `/projects/${id}/members/${member.id}`, { access: 'limited' })).status).toBe(200);
    expect((await call('GET', `/projects/${id}`, undefined, { session: memberSession })).status).toBe(200);
    const c = await call('GET', `/projects/${id}`, undefined, { session: clientSession });
    expect(c.status).toBe(403);
    expect(reasonOf(c)).toBe('workspace_users_only');
    expect(reasonOf(await call('GET', `/projects/${randomUUID()}`))).toBe('unknown_project');
    expect(reasonOf(await call('GET', '/projects/not-a-uuid'))).toBe('bad_uuid');
  });

  it('PATCH changes name, billing client, mode and collaborators; existing tickets keep their billing client', async () => {
    const ticket = await makeTicket(app.db.sql, ws, { projectId: id });
    const res = await call('PATCH', `/projects/${id}`, { name: 'Ops', billingClientId: globex.id, billingMode: 'on_close', collaboratorIds: [acme.id] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Ops', key: 'OPS', billingClientId: globex.id, billingMode: 'on_close', collaboratorIds: [acme.id] });
    const [t] = await app.db.sql<{ billingClientId: string | null }[]>`select billing_client_id as "billingClientId" from tickets where id = ${ticket.id}`;
    expect(t!.billingClientId).toBe(acme.id);
    const back = await call('PATCH', `/projects/${id}`, { billingClientId: null, collaboratorIds: [] });
    expect(back.body).toMatchObject({ billingClientId: null, collaboratorIds: [] });
  });

  it('PATCH refusals: unknown project 404, unknown client 404, taken key 409, bank mismatch 400, member 403', async () => {
    expect(reasonOf(await call('PATCH', `/projects/${randomUUID()}`, { name: 'X' }))).toBe('unknown_project');
    expect(reasonOf(await call('PATCH', `/projects/${id}`, { billingClientId: randomUUID() }))).toBe('unknown_client');
    expect(reasonOf(await call('PATCH', `/projects/${id}`, { key: 'WEB' }))).toBe('key_taken');
    expect(reasonOf(await call('PATCH', `/projects/${id}`, { key: 'INBOX' }))).toBe('key_reserved');
    const bank = await makeBank(app.db.sql, ws, { clientId: globex.id });
    expect(reasonOf(await call('PATCH', `/projects/${id}`, { billingClientId: acme.id, billingPolicy: `bank:${bank.id}` }))).toBe('bank_client_mismatch');
    expect(reasonOf(await call('PATCH', `/projects/${id}`, { name: '' }))).toBe('validation');
    expect(reasonOf(await call('PATCH', `/projects/${id}`, { name: 'X' }, { session: memberSession }))).toBe('admin_only');
  });

  it('an archived client already on the project may stay (even moved to billing client); a newly named one is refused', async () => {
    const c = await makeClient(app.db.sql, ws, { name: 'Stays' });
    expect((await call('PATCH', `/projects/${id}`, { collaboratorIds: [c.id] })).status).toBe(200);
    await call('POST', `/clients/${c.id}/archive`, {});
    expect((await call('PATCH', `/projects/${id}`, { name: 'Ops again', collaboratorIds: [c.id] })).status).toBe(200);
    expect((await call('PATCH', `/projects/${id}`, { billingClientId: c.id, collaboratorIds: [] })).status).toBe(200);
    const gone = await makeClient(app.db.sql, ws, { name: 'Gone too' });
    await call('POST', `/clients/${gone.id}/archive`, {});
    const newly = await call('PATCH', `/projects/${id}`, { collaboratorIds: [gone.id] });
    expect(newly.status).toBe(409);
    expect(reasonOf(newly)).toBe('client_archived');
  });

  it('archive and restore; archiving twice keeps the first date; unknown project 404', async () => {
    const a = await call('POST', `/projects/${id}/archive`, {});
    expect(a.status).toBe(200);
    expect(a.body.archivedAt).toEqual(expect.any(String));
    expect((await call('POST', `/projects/${id}/archive`, { archived: true })).body.archivedAt).toBe(a.body.archivedAt);
    expect((await call('POST', `/projects/${id}/archive`, { archived: false })).body.archivedAt).toBeNull();
    expect(reasonOf(await call('POST', `/projects/${randomUUID()}/archive`, {}))).toBe('unknown_project');
    expect(reasonOf(await call('POST', `/projects/${id}/archive`, {}, { session: memberSession }))).toBe('admin_only');
  });
});

describe('memberships', () => {
  let id: string;
  beforeAll(async () => {
    id = (await makeProject(app.db.sql, ws, { key: 'MEMB' })).id;
  });

  it('PUT adds a member with access, manager and category; PUT again changes them; GET lists them by name', async () => {
    const cat = await makeCategory(app.db.sql, ws, 'Design');
    const res = await call('PUT', `/projects/${id}/members/${member.id}`, { access: 'full', manager: true, categoryId: cat.id });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      identityId: member.id,
      name: 'Mia Member',
      email: member.email,
      role: 'member',
      access: 'full',
      manager: true,
      categoryId: cat.id,
    });
    const again = await call('PUT', `/projects/${id}/members/${member.id}`, { access: 'limited' }, { token: adminToken });
    expect(again.body).toMatchObject({ access: 'limited', manager: false, categoryId: null });
    await call('PUT', `/projects/${id}/members/${other.id}`, { access: 'full' });
    const list = await call('GET', `/projects/${id}/members`);
    expect(list.body.members.map((m: { name: string }) => m.name)).toEqual(['Mia Member', 'Otto Agent']);
    // a member reads the members of a project they belong to
    expect((await call('GET', `/projects/${id}/members`, undefined, { session: memberSession })).status).toBe(200);
  });

  it('PUT refusals: client user or unknown person 404 unknown_person, unknown category 404, bad access 400, member 403', async () => {
    for (const who of [clientUser.id, randomUUID()]) {
      const res = await call('PUT', `/projects/${id}/members/${who}`, { access: 'full' });
      expect(res.status).toBe(404);
      expect(reasonOf(res)).toBe('unknown_person');
    }
    expect(reasonOf(await call('PUT', `/projects/${id}/members/${member.id}`, { access: 'full', categoryId: randomUUID() }))).toBe('unknown_category');
    expect(reasonOf(await call('PUT', `/projects/${id}/members/${member.id}`, { access: 'owner' }))).toBe('validation');
    expect(reasonOf(await call('PUT', `/projects/${id}/members/${member.id}`, {}))).toBe('validation');
    expect(reasonOf(await call('PUT', `/projects/${randomUUID()}/members/${member.id}`, { access: 'full' }))).toBe('unknown_project');
    expect(reasonOf(await call('PUT', `/projects/${id}/members/nope`, { access: 'full' }))).toBe('bad_uuid');
    expect(reasonOf(await call('PUT', `/projects/${id}/members/${member.id}`, { access: 'full' }, { session: memberSession }))).toBe('admin_only');
    expect(reasonOf(await call('PUT', `/projects/${id}/members/${member.id}`, { access: 'full' }, { token: writeToken }))).toBe('missing_scope');
  });

  it('GET members: a project the member does not belong to is 404; client users 403', async () => {
    const hidden = await makeProject(app.db.sql, ws, { key: 'HIDM' });
    expect(reasonOf(await call('GET', `/projects/${hidden.id}/members`, undefined, { session: memberSession }))).toBe('unknown_project');
    expect(reasonOf(await call('GET', `/projects/${id}/members`, undefined, { session: clientSession }))).toBe('workspace_users_only');
  });

  it('DELETE removes the membership and nothing else: their time and tickets stay; they still see tickets assigned to them', async () => {
    const ticket = await makeTicket(app.db.sql, ws, { projectId: id, assigneeId: other.id, reporterId: other.id });
    const today = new Date().toISOString().slice(0, 10);
    await makePeriod(app.db.sql, ws, { start: today, end: today });
    const entry = await makeTimeEntry(app.db.sql, ws, { ticketId: ticket.id, userId: other.id, spentOn: new Date().toISOString().slice(0, 10), minutes: 30 });
    const res = await call('DELETE', `/projects/${id}/members/${other.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expect((await call('GET', `/projects/${id}/members`)).body.members.map((m: { identityId: string }) => m.identityId)).not.toContain(other.id);
    const [left] = await app.db.sql<{ n: number }[]>`
      select (select count(*)::int from time_entries where id = ${entry.id}) + (select count(*)::int from tickets where id = ${ticket.id}) as n`;
    expect(left!.n).toBe(2);
    const otherSession = await makeToken(app.db.sql, ws, other, { scopes: ['read'], kind: 'agent', createdBy: owner.id });
    expect((await call('GET', `/tickets/${ticket.humanId}`, undefined, { token: otherSession.token })).status).toBe(200);
    const again = await call('DELETE', `/projects/${id}/members/${other.id}`);
    expect(again.status).toBe(404);
    expect(reasonOf(again)).toBe('unknown_person');
    expect(reasonOf(await call('DELETE', `/projects/${randomUUID()}/members/${other.id}`))).toBe('unknown_project');
    expect(reasonOf(await call('DELETE', `/projects/${id}/members/${member.id}`, undefined, { session: memberSession }))).toBe('admin_only');
  });
});
