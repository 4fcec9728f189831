import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makeClient, makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

let app: TestApp;
let ws: Workspace;
let project: { id: string; key: string };
let hiddenProject: { id: string; key: string };
let owner: Person;
let member: Person;
let outsider: Person;
let reporter: Person; // client user of client A
let colleague: Person; // another client user of client A
let elevated: Person; // elevated client user of client A
let partner: Person; // client user of the collaborating client B
let stranger: Person; // client user of unrelated client C
let s: Record<'owner' | 'member' | 'outsider' | 'reporter' | 'colleague' | 'elevated', SessionCookie>;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  const [a, b, c] = [
    await makeClient(sql, ws, { name: 'Acme' }),
    await makeClient(sql, ws, { name: 'Partner' }),
    await makeClient(sql, ws, { name: 'Stranger' }),
  ];
  owner = await makeUser(sql, ws, { role: 'owner' });
  member = await makeUser(sql, ws, { role: 'member' });
  outsider = await makeUser(sql, ws, { role: 'member' });
  reporter = await makeUser(sql, ws, { role: 'client', clientId: a.id });
  colleague = await makeUser(sql, ws, { role: 'client', clientId: a.id });
  elevated = await makeUser(sql, ws, { role: 'client_elevated', clientId: a.id });
  partner = await makeUser(sql, ws, { role: 'client', clientId: b.id });
  stranger = await makeUser(sql, ws, { role: 'client', clientId: c.id, name: 'Sam Stranger' });
  project = await makeProject(sql, ws, { billingClientId: a.id, collaboratorIds: [b.id], members: [{ person: member }] });
  hiddenProject = await makeProject(sql, ws);
  s = {
    owner: await login(app, owner.email, owner.password),
    member: await login(app, member.email, member.password),
    outsider: await login(app, outsider.email, outsider.password),
    reporter: await login(app, reporter.email, reporter.password),
    colleague: await login(app, colleague.email, colleague.password),
    elevated: await login(app, elevated.email, elevated.password),
  };
});
afterAll(() => app.close());

const add = (ref: string, body: unknown, session: SessionCookie = s.member) => app.call('POST', `/api/w/${ws.slug}/tickets/${ref}/viewers`, { session, body });
const remove = (ref: string, id: string, session: SessionCookie = s.member) =>
  app.call('DELETE', `/api/w/${ws.slug}/tickets/${ref}/viewers/${id}`, { session });
const ticket = (opts: Parameters<typeof makeTicket>[2] = {}) => makeTicket(app.db.sql, ws, { projectId: project.id, reporterId: reporter.id, ...opts });
const viewersOf = async (id: string) =>
  (
    await app.db.sql<
      { identity_id: string; added_by: string }[]
    >`select identity_id, added_by from ticket_viewers where ticket_id = ${id} order by created_at, identity_id`
  ).map((r) => r.identity_id);
const events = (id: string, kind: string) =>
  app.db.sql<
    { payload: any; actor_id: string }[]
  >`select payload, actor_id from ticket_events where ticket_id = ${id} and kind = ${kind} order by created_at, id`;

describe('POST /tickets/{ref}/viewers', () => {
  it('adds viewers: 200 with the ids granted, one viewer_added event per grant', async () => {
    const t = await ticket();
    const res = await add(t.humanId, { identityIds: [colleague.id, outsider.id] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ added: [colleague.id, outsider.id] });
    expect((await viewersOf(t.id)).sort()).toEqual([colleague.id, outsider.id].sort());
    const [row] = await app.db.sql<{ added_by: string }[]>`select added_by from ticket_viewers where ticket_id = ${t.id} and identity_id = ${colleague.id}`;
    expect(row!.added_by).toBe(member.id);
    const ev = await events(t.id, 'viewer_added');
    expect(ev.map((e) => e.payload.identityId).sort()).toEqual([colleague.id, outsider.id].sort());
    expect(ev.every((e) => e.actor_id === member.id)).toBe(true);
  });

  it('people already present are omitted from added (and duplicates in the request count once)', async () => {
    const t = await ticket();
    await add(t.humanId, { identityIds: [colleague.id] });
    const res = await add(t.humanId, { identityIds: [colleague.id, owner.id, owner.id.toUpperCase()] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ added: [owner.id] });
    expect(await events(t.id, 'viewer_added')).toHaveLength(2);
    const none = await add(t.humanId, { identityIds: [colleague.id] });
    expect(none.body).toEqual({ added: [] });
  });

  it('a client user of a collaborating client may be added; the new viewer then sees the ticket', async () => {
    const t = await ticket();
    const partnerToken = (await makeToken(app.db.sql, ws, partner)).token;
    expect((await app.call('GET', `/api/w/${ws.slug}/tickets/${t.humanId}/comments`, { token: partnerToken })).status).toBe(404);
    expect((await add(t.humanId, { identityIds: [partner.id] })).body).toEqual({ added: [partner.id] });
    expect((await app.call('GET', `/api/w/${ws.slug}/tickets/${t.humanId}/comments`, { token: partnerToken })).status).toBe(200);
  });

  it('404 unknown_person with identityId for a non-member; all or nothing', async () => {
    const t = await ticket();
    const other = await makeWorkspace(app.db.sql);
    const foreigner = await makeUser(app.db.sql, other, { role: 'member' });
    for (const unknown of [randomUUID(), foreigner.id]) {
      const res = await add(t.humanId, { identityIds: [colleague.id, unknown] });
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'not_found', details: { reason: 'unknown_person', identityId: unknown } });
    }
    expect(await viewersOf(t.id)).toEqual([]);
    expect(await events(t.id, 'viewer_added')).toHaveLength(0);
  });

  it('403 share_forbidden with identityId and name for a client user of another client; all or nothing', async () => {
    const t = await ticket();
    const res = await add(t.humanId, { identityIds: [colleague.id, stranger.id] });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'share_forbidden', identityId: stranger.id, name: 'Sam Stranger' } });
    expect(await viewersOf(t.id)).toEqual([]);
  });

  it('an Inbox ticket is shareable with the client of its client-user reporter only', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: null, reporterId: reporter.id });
    expect((await add(t.humanId, { identityIds: [colleague.id] }, s.owner)).body).toEqual({ added: [colleague.id] });
    const res = await add(t.humanId, { identityIds: [partner.id] }, s.owner);
    expect(res.status).toBe(403);
    expect(res.body.error.details.reason).toBe('share_forbidden');
  });

  it('an elevated client user may add viewers; an ordinary client user may not (403)', async () => {
    const t = await ticket();
    expect((await add(t.humanId, { identityIds: [colleague.id] }, s.elevated)).body).toEqual({ added: [colleague.id] });
    const res = await add(t.humanId, { identityIds: [owner.id] }, s.reporter);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
    expect(await viewersOf(t.id)).toEqual([colleague.id]);
  });

  it('403 session_required for a token; 404 for a hidden ticket', async () => {
    const t = await ticket();
    const token = (await makeToken(app.db.sql, ws, member)).token;
    const res = await app.call('POST', `/api/w/${ws.slug}/tickets/${t.humanId}/viewers`, { token, body: { identityIds: [owner.id] } });
    expect(res.status).toBe(403);
    expect(res.body.error.details.reason).toBe('session_required');
    const hidden = await makeTicket(app.db.sql, ws, { projectId: hiddenProject.id });
    const h = await add(hidden.humanId, { identityIds: [owner.id] });
    expect(h.status).toBe(404);
    expect(h.body.error.code).toBe('not_found');
    expect((await add(t.humanId, { identityIds: [owner.id] }, s.outsider)).status).toBe(404);
    expect(await viewersOf(t.id)).toEqual([]);
  });

  it('400 for bad bodies, and nothing changes', async () => {
    const t = await ticket();
    const many = Array.from({ length: 21 }, () => randomUUID());
    for (const body of [
      {},
      { identityIds: [] },
      { identityIds: many },
      { identityIds: ['nope'] },
      { identityIds: owner.id },
      { identityIds: [5] },
      { identityIds: null },
    ]) {
      const res = await add(t.humanId, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid');
    }
    expect(await viewersOf(t.id)).toEqual([]);
  });
});

describe('DELETE /tickets/{ref}/viewers/{identityId}', () => {
  it('removes a viewer with a viewer_removed event', async () => {
    const t = await ticket();
    await add(t.humanId, { identityIds: [colleague.id, outsider.id] });
    const res = await remove(t.humanId, colleague.id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expect(await viewersOf(t.id)).toEqual([outsider.id]);
    expect((await events(t.id, 'viewer_removed')).map((e) => e.payload)).toEqual([{ identityId: colleague.id }]);
  });

  it('the reporter can never be removed (403), even by the owner and even when stored as a viewer', async () => {
    const t = await ticket();
    await app.db.sql`insert into ticket_viewers (ticket_id, identity_id) values (${t.id}, ${reporter.id})`;
    for (const session of [s.owner, s.member, s.reporter]) {
      const res = await remove(t.humanId, reporter.id, session);
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
    }
    expect(await viewersOf(t.id)).toEqual([reporter.id]);
  });

  it('404 when the person is not a viewer', async () => {
    const t = await ticket();
    const res = await remove(t.humanId, outsider.id);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
    expect((await remove(t.humanId, randomUUID())).status).toBe(404);
  });

  it('anyone may remove themselves; a client user may not remove someone else (403)', async () => {
    const t = await ticket();
    await add(t.humanId, { identityIds: [colleague.id, outsider.id] });
    const other = await remove(t.humanId, outsider.id, s.colleague);
    expect(other.status).toBe(403);
    expect(other.body.error.code).toBe('forbidden');
    expect((await remove(t.humanId, colleague.id, s.colleague)).status).toBe(200);
    expect(await viewersOf(t.id)).toEqual([outsider.id]);
    // the outsider sees the ticket only as a viewer, and may leave it
    expect((await remove(t.humanId, outsider.id, s.outsider)).status).toBe(200);
    expect(await viewersOf(t.id)).toEqual([]);
  });

  it('403 session_required for a token; 404 for a hidden ticket; 400 for a bad id', async () => {
    const t = await ticket();
    await add(t.humanId, { identityIds: [outsider.id] });
    const token = (await makeToken(app.db.sql, ws, member)).token;
    const res = await app.call('DELETE', `/api/w/${ws.slug}/tickets/${t.humanId}/viewers/${outsider.id}`, { token });
    expect(res.status).toBe(403);
    expect(res.body.error.details.reason).toBe('session_required');
    const hidden = await makeTicket(app.db.sql, ws, { projectId: hiddenProject.id });
    await app.db.sql`insert into ticket_viewers (ticket_id, identity_id) values (${hidden.id}, ${owner.id})`;
    expect((await remove(hidden.humanId, owner.id)).status).toBe(404);
    const bad = await remove(t.humanId, 'nope');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toMatchObject({ field: 'identityId' });
    expect(await viewersOf(t.id)).toEqual([outsider.id]);
  });
});
