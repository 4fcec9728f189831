import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makeClient, makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

let app: TestApp;
let ws: Workspace;
let owner: Person, admin: Person, member: Person, limited: Person, clientUser: Person;
let project: { id: string; key: string }, hiddenProject: { id: string };
let ownerSession: SessionCookie, memberSession: SessionCookie;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  const acme = await makeClient(sql, ws, { name: 'Acme' });
  owner = await makeUser(sql, ws, { role: 'owner' });
  admin = await makeUser(sql, ws, { role: 'admin' });
  member = await makeUser(sql, ws, { role: 'member' });
  limited = await makeUser(sql, ws, { role: 'member' });
  clientUser = await makeUser(sql, ws, { role: 'client', clientId: acme.id });
  project = await makeProject(sql, ws, { billingClientId: acme.id, members: [{ person: member }, { person: limited, access: 'limited' }] });
  hiddenProject = await makeProject(sql, ws);
  ownerSession = await login(app, owner.email, owner.password);
  memberSession = await login(app, member.email, member.password);
});
afterAll(() => app.close());

const base = () => `/api/w/${ws.slug}/tickets`;
const row = async (id: string) => (await app.db.sql`select * from tickets where id = ${id}`)[0];
const eventKinds = async (id: string) => (await app.db.sql`select kind from ticket_events where ticket_id = ${id} order by created_at, id`).map((e) => e.kind);
const staleReauth = (s: SessionCookie) => app.db.sql`update sessions set reauth_at = now() - interval '11 minutes' where csrf_token = ${s.csrfToken}`;

function expectError(res: { status: number; body: any }, status: number, code: string, reason?: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
  if (reason) expect(res.body.error.details.reason).toBe(reason);
}

describe('POST /tickets/{ref}/archive', () => {
  const archive = (ref: string, body: unknown, auth: { session?: SessionCookie; token?: string } = { session: memberSession }) =>
    app.call('POST', `${base()}/${ref}/archive`, { ...auth, body });

  it('a full member archives and restores; each real change writes one event', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: project.id });
    const res = await archive(t.humanId, { archived: true });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expect((await row(t.id))!.archived).toBe(true);
    expect((await app.call('GET', `${base()}/${t.id}`, { session: memberSession })).body.archived).toBe(true);
    expect((await archive(t.id, { archived: true })).status).toBe(200);
    expect(await eventKinds(t.id)).toEqual(['archived']);
    expect((await archive(t.id, { archived: false, extra: 'ignored' })).body).toEqual({ ok: true });
    expect((await row(t.id))!.archived).toBe(false);
    expect(await eventKinds(t.id)).toEqual(['archived', 'restored']);
  });

  it('Owner and Admin archive Inbox tickets; a member may not', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: null });
    expectError(await archive(t.id, { archived: true }), 403, 'forbidden');
    expect((await row(t.id))!.archived).toBe(false);
    const adminSession = await login(app, admin.email, admin.password);
    expect((await archive(t.id, { archived: true }, { session: adminSession })).status).toBe(200);
  });

  it('403 for a limited member and for a client user (even the reporter)', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: project.id, reporterId: clientUser.id });
    for (const person of [limited, clientUser]) {
      const session = await login(app, person.email, person.password);
      expectError(await archive(t.id, { archived: true }, { session }), 403, 'forbidden');
    }
    expect(await eventKinds(t.id)).toEqual([]);
    expect((await row(t.id))!.archived).toBe(false);
  });

  it('403 session_required for a token; 404 for a ticket the caller cannot see', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: project.id });
    const token = (await makeToken(app.db.sql, ws, owner)).token;
    expectError(await archive(t.id, { archived: true }, { token }), 403, 'forbidden', 'session_required');
    const hidden = await makeTicket(app.db.sql, ws, { projectId: hiddenProject.id });
    expectError(await archive(hidden.id, { archived: true }), 404, 'not_found');
    expectError(await archive(randomUUID(), { archived: true }), 404, 'not_found');
    expect((await row(hidden.id))!.archived).toBe(false);
  });

  it('400 for a missing or non-boolean archived', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: project.id });
    for (const body of [{}, { archived: 'true' }, { archived: 1 }, { archived: null }]) {
      expectError(await archive(t.id, body), 400, 'invalid', 'validation');
    }
    expect((await row(t.id))!.archived).toBe(false);
    expect(await eventKinds(t.id)).toEqual([]);
  });
});

describe('DELETE /tickets/{ref}', () => {
  const del = (ref: string, auth: { session?: SessionCookie; token?: string } = { session: ownerSession }) => app.call('DELETE', `${base()}/${ref}`, auth);

  it('Owner with a recent re-authentication deletes the ticket and what hangs off it', async () => {
    const sql = app.db.sql;
    const t = await makeTicket(sql, ws, { projectId: project.id });
    const child = await makeTicket(sql, ws, { projectId: project.id, parentId: t.id });
    const linked = await makeTicket(sql, ws, { projectId: project.id });
    await sql`insert into ticket_links (workspace_id, source_id, target_id, kind) values (${ws.id}, ${t.id}, ${linked.id}, 'blocks')`;
    await sql`insert into comments (workspace_id, ticket_id, audience, body) values (${ws.id}, ${t.id}, 'client', 'bye')`;
    const res = await del(t.humanId);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expect(await row(t.id)).toBeUndefined();
    expect((await app.call('GET', `${base()}/${t.humanId}`, { session: ownerSession })).status).toBe(404);
    expect(await sql`select 1 from ticket_refs where ticket_id = ${t.id}`).toHaveLength(0);
    expect(await sql`select 1 from comments where ticket_id = ${t.id}`).toHaveLength(0);
    expect((await row(child.id))!.parent_id).toBeNull();
    const [pc] = await sql`select payload from ticket_events where ticket_id = ${child.id} and kind = 'parent_changed'`;
    expect(pc!.payload).toEqual({ old: t.id, new: null });
    const [lr] = await sql`select payload from ticket_events where ticket_id = ${linked.id} and kind = 'link_removed'`;
    expect(lr!.payload).toMatchObject({ kind: 'blocks', direction: 'incoming', otherId: t.id });
  });

  it('403 reauth_required without a re-authentication in the last ten minutes; re-authenticating opens the window', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: project.id });
    const session = await login(app, admin.email, admin.password);
    await staleReauth(session);
    expectError(await del(t.id, { session }), 403, 'forbidden', 'reauth_required');
    expect(await row(t.id)).toBeDefined();
    const re = await app.call('POST', '/api/auth/reauth', { session, body: { password: admin.password } });
    expect(re.status).toBe(200);
    expect((await del(t.id, { session })).status).toBe(200);
    expect(await row(t.id)).toBeUndefined();
  });

  it('403 for anyone but Owner and Admin, and for a token', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: project.id });
    expectError(await del(t.id, { session: memberSession }), 403, 'forbidden');
    const token = (await makeToken(app.db.sql, ws, owner)).token;
    expectError(await del(t.id, { token }), 403, 'forbidden', 'session_required');
    expect(await row(t.id)).toBeDefined();
  });

  it('404 for an unknown ticket', async () => {
    expectError(await del(randomUUID()), 404, 'not_found');
    expectError(await del(`${project.key}-424242`), 404, 'not_found');
  });
});

describe('POST /tickets/{id}/redact', () => {
  const redact = (id: string, body: unknown, auth: { session?: SessionCookie; token?: string } = { session: ownerSession }) =>
    app.call('POST', `${base()}/${id}/redact`, { ...auth, body });

  async function secretTicket() {
    const sql = app.db.sql;
    const t = await makeTicket(sql, ws, { projectId: project.id, title: 'Secret salary of Bob', description: 'Bob earns a lot' });
    await sql`update tickets set billing_description = 'Bob review' where id = ${t.id}`;
    await sql`insert into comments (workspace_id, ticket_id, audience, body) values (${ws.id}, ${t.id}, 'internal', 'Bob again'), (${ws.id}, ${t.id}, 'client', 'and Bob')`;
    await sql`insert into ticket_events (workspace_id, ticket_id, kind, payload)
              values (${ws.id}, ${t.id}, 'field_changed', ${sql.json({ field: 'title', old: 'Bob draft', new: 'Secret salary of Bob' })}),
                     (${ws.id}, ${t.id}, 'field_changed', ${sql.json({ field: 'dueDate', old: null, new: '2024-01-01' })})`;
    return t;
  }

  it('replaces title, description, billing description, comments and quoted event values with the marker', async () => {
    const t = await secretTicket();
    const res = await redact(t.id, { reason: '  GDPR request  ' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ ok: true, runs: 0 });
    const r = (await row(t.id))!;
    expect(r).toMatchObject({ title: '[redacted]', description: '[redacted]', billing_description: '[redacted]' });
    expect(r.redacted_at).toBeInstanceOf(Date);
    const comments = await app.db.sql`select body from comments where ticket_id = ${t.id}`;
    expect(comments.map((c) => c.body)).toEqual(['[redacted]', '[redacted]']);
    const events = await app.db.sql`select kind, payload from ticket_events where ticket_id = ${t.id} order by created_at, id`;
    expect(JSON.stringify(events)).not.toMatch(/Bob/);
    expect(events.find((e) => e.payload.field === 'dueDate')!.payload).toEqual({ field: 'dueDate', old: null, new: '2024-01-01' });
    expect(events.at(-1)).toMatchObject({ kind: 'redacted', payload: { reason: 'GDPR request' } });
    const [found] = await app.db
      .sql`select count(*)::int as n from tickets where id = ${t.id} and (search_public || search_internal) @@ to_tsquery('simple', 'bob')`;
    expect(found!.n).toBe(0);
    const page = await app.call('GET', `${base()}/${t.id}`, { session: ownerSession });
    expect(page.body.title).toBe('[redacted]');
  });

  it('the path takes the UUID only: a human id is 400', async () => {
    const t = await secretTicket();
    const res = await redact(t.humanId, { reason: 'because' });
    expectError(res, 400, 'invalid', 'bad_uuid');
    expect((await row(t.id))!.title).toBe('Secret salary of Bob');
  });

  it('400 for a reason shorter than 3 or longer than 500 characters, or missing', async () => {
    const t = await secretTicket();
    for (const body of [{}, { reason: 'ab' }, { reason: '  ab   ' }, { reason: 'r'.repeat(501) }, { reason: 42 }, { reason: null }]) {
      expectError(await redact(t.id, body), 400, 'invalid', 'validation');
    }
    expect((await row(t.id))!.title).toBe('Secret salary of Bob');
    expect((await redact(t.id, { reason: 'r'.repeat(500) })).status).toBe(200);
  });

  it('403 for a member, for a stale re-authentication, and for a token', async () => {
    const t = await secretTicket();
    expectError(await redact(t.id, { reason: 'because' }, { session: memberSession }), 403, 'forbidden');
    const session = await login(app, admin.email, admin.password);
    await staleReauth(session);
    expectError(await redact(t.id, { reason: 'because' }, { session }), 403, 'forbidden', 'reauth_required');
    const token = (await makeToken(app.db.sql, ws, owner)).token;
    expectError(await redact(t.id, { reason: 'because' }, { token }), 403, 'forbidden', 'session_required');
    expect((await row(t.id))!.title).toBe('Secret salary of Bob');
    expect(await app.db.sql`select 1 from ticket_events where ticket_id = ${t.id} and kind = 'redacted'`).toHaveLength(0);
  });

  it('404 for an unknown ticket id', async () => {
    expectError(await redact(randomUUID(), { reason: 'because' }), 404, 'not_found');
  });
});
