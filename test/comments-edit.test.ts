import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeClient, makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

let app: TestApp;
let ws: Workspace;
let projectId: string;
let reporter: Person;
let colleague: Person;
let stranger: Person;
let t: Record<'owner' | 'member' | 'other' | 'outsider' | 'readOnly' | 'reporter', string>;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  const a = await makeClient(sql, ws, { name: 'Acme' });
  const c = await makeClient(sql, ws, { name: 'Other' });
  const owner = await makeUser(sql, ws, { role: 'owner' });
  const member = await makeUser(sql, ws, { role: 'member' });
  const other = await makeUser(sql, ws, { role: 'member' });
  const outsider = await makeUser(sql, ws, { role: 'member' });
  reporter = await makeUser(sql, ws, { role: 'client', clientId: a.id });
  colleague = await makeUser(sql, ws, { role: 'client', clientId: a.id, name: 'Carl Colleague' });
  stranger = await makeUser(sql, ws, { role: 'client', clientId: c.id, name: 'Sam Stranger' });
  projectId = (await makeProject(sql, ws, { billingClientId: a.id, members: [{ person: member }, { person: other }] })).id;
  t = {
    owner: (await makeToken(sql, ws, owner)).token,
    member: (await makeToken(sql, ws, member)).token,
    other: (await makeToken(sql, ws, other)).token,
    outsider: (await makeToken(sql, ws, outsider)).token,
    readOnly: (await makeToken(sql, ws, member, { scopes: ['read'] })).token,
    reporter: (await makeToken(sql, ws, reporter)).token,
  };
});
afterAll(() => app.close());

const base = (ref: string) => `/api/w/${ws.slug}/tickets/${ref}/comments`;
const post = async (ref: string, body: unknown, token = t.member) => (await app.call('POST', base(ref), { token, body })).body;
const patch = (ref: string, id: string, body: unknown, token = t.member) => app.call('PATCH', `${base(ref)}/${id}`, { token, body });
const del = (ref: string, id: string, token = t.member) => app.call('DELETE', `${base(ref)}/${id}`, { token });
const ticket = () => makeTicket(app.db.sql, ws, { projectId, reporterId: reporter.id });
const stored = async (id: string) => (await app.db.sql<{ body: string; audience: string }[]>`select body, audience from comments where id = ${id}`)[0];
const events = (id: string, kind: string) =>
  app.db.sql<{ payload: any }[]>`select payload from ticket_events where ticket_id = ${id} and kind = ${kind} order by created_at, id`;

describe('PATCH /tickets/{ref}/comments/{id}', () => {
  it('the author edits the body: 200 Comment with edited true and a comment_edited event', async () => {
    const tk = await ticket();
    const c = await post(tk.humanId, { body: 'frist' });
    const res = await patch(tk.humanId, c.id, { body: 'first _really_' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: c.id,
      body: 'first _really_',
      bodyHtml: '<p>first <em>really</em></p>\n',
      audience: 'internal',
      edited: true,
      createdAt: c.createdAt,
    });
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThan(Date.parse(c.createdAt));
    expect(await stored(c.id)).toEqual({ body: 'first _really_', audience: 'internal' });
    expect((await events(tk.id, 'comment_edited')).map((e) => e.payload)).toEqual([{ commentId: c.id, audience: 'internal' }]);
  });

  it('changing the audience moves the comment and its attachments', async () => {
    const tk = await ticket();
    const c = await post(tk.humanId, { body: 'for the client' });
    await app.db.sql`insert into attachments (workspace_id, ticket_id, comment_id, filename, content_type, size, audience, data)
                     values (${ws.id}, ${tk.id}, ${c.id}, 'a.txt', 'text/plain', 1, 'internal', '\\x41')`;
    const res = await patch(tk.humanId, c.id, { audience: 'client' });
    expect(res.status).toBe(200);
    expect(res.body.audience).toBe('client');
    const [a] = await app.db.sql<{ audience: string }[]>`select audience from attachments where comment_id = ${c.id}`;
    expect(a!.audience).toBe('client');
    const seen = await app.call('GET', base(tk.humanId), { token: t.reporter });
    expect(seen.body.items.map((x: any) => x.id)).toEqual([c.id]);
  });

  it('an edit that changes nothing writes no event', async () => {
    const tk = await ticket();
    const c = await post(tk.humanId, { body: 'same' });
    const res = await patch(tk.humanId, c.id, { body: 'same', audience: 'internal' });
    expect(res.status).toBe(200);
    expect(res.body.edited).toBe(false);
    expect(await events(tk.id, 'comment_edited')).toHaveLength(0);
  });

  it('mentions apply as on a new comment: a grant for the ticket client, 403 share_forbidden for another', async () => {
    const tk = await ticket();
    const c = await post(tk.humanId, { body: 'hello', audience: 'client' });
    const denied = await patch(tk.humanId, c.id, { body: 'hello @Sam', mentions: [stranger.id] });
    expect(denied.status).toBe(403);
    expect(denied.body.error.details).toMatchObject({ reason: 'share_forbidden', identityId: stranger.id, name: 'Sam Stranger' });
    expect(await stored(c.id)).toEqual({ body: 'hello', audience: 'client' });
    const ok = await patch(tk.humanId, c.id, { body: 'hello @Carl', mentions: [colleague.id] });
    expect(ok.status).toBe(200);
    const v = await app.db.sql`select 1 from ticket_viewers where ticket_id = ${tk.id} and identity_id = ${colleague.id}`;
    expect(v).toHaveLength(1);
  });

  it('403 not_author for someone else, the owner included', async () => {
    const tk = await ticket();
    const c = await post(tk.humanId, { body: 'mine' });
    for (const token of [t.other, t.owner]) {
      const res = await patch(tk.humanId, c.id, { body: 'theirs' }, token);
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'not_author' } });
    }
    expect(await stored(c.id)).toEqual({ body: 'mine', audience: 'internal' });
  });

  it('a client user edits their own client comment but may not make it internal (403 audience_forbidden)', async () => {
    const tk = await ticket();
    const c = await post(tk.humanId, { body: 'question' }, t.reporter);
    expect((await patch(tk.humanId, c.id, { body: 'better question' }, t.reporter)).status).toBe(200);
    const res = await patch(tk.humanId, c.id, { audience: 'internal' }, t.reporter);
    expect(res.status).toBe(403);
    expect(res.body.error.details.reason).toBe('audience_forbidden');
    expect(await stored(c.id)).toEqual({ body: 'better question', audience: 'client' });
  });

  it('404 for an internal comment seen from a client user, a comment of another ticket, an unknown id, a hidden ticket', async () => {
    const [tk, other] = [await ticket(), await ticket()];
    const internal = await post(tk.humanId, { body: 'staff only' });
    const res = await patch(tk.humanId, internal.id, { body: 'x' }, t.reporter);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
    expect((await patch(other.humanId, internal.id, { body: 'x' })).status).toBe(404);
    expect((await patch(tk.humanId, randomUUID(), { body: 'x' })).status).toBe(404);
    expect((await patch(tk.humanId, internal.id, { body: 'x' }, t.outsider)).status).toBe(404);
    expect(await stored(internal.id)).toEqual({ body: 'staff only', audience: 'internal' });
  });

  it('400 for bad bodies and ids; 403 for a token without write', async () => {
    const tk = await ticket();
    const c = await post(tk.humanId, { body: 'keep' });
    for (const body of [
      {},
      { body: '' },
      { body: ' ' },
      { body: 'x'.repeat(50_001) },
      { body: 5 },
      { audience: 'everyone' },
      { body: 'x', mentions: ['nope'] },
    ]) {
      const res = await patch(tk.humanId, c.id, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid');
    }
    const bad = await patch(tk.humanId, 'not-a-uuid', { body: 'x' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toMatchObject({ field: 'commentId' });
    const ro = await patch(tk.humanId, c.id, { body: 'x' }, t.readOnly);
    expect(ro.status).toBe(403);
    expect(await stored(c.id)).toEqual({ body: 'keep', audience: 'internal' });
  });
});

describe('DELETE /tickets/{ref}/comments/{id}', () => {
  const counter = async (id: string) => (await app.db.sql<{ n: number }[]>`select comment_count as n from tickets where id = ${id}`)[0]!.n;

  it('the author deletes: gone, counter down, comment_deleted event', async () => {
    const tk = await ticket();
    const c = await post(tk.humanId, { body: 'oops', audience: 'client' });
    await post(tk.humanId, { body: 'stays' });
    expect(await counter(tk.id)).toBe(2);
    const res = await del(tk.humanId, c.id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expect(await stored(c.id)).toBeUndefined();
    expect(await counter(tk.id)).toBe(1);
    expect((await events(tk.id, 'comment_deleted')).map((e) => e.payload)).toEqual([{ commentId: c.id, audience: 'client' }]);
    expect((await del(tk.humanId, c.id)).status).toBe(404);
  });

  it("an owner may delete anyone's comment; another member may not (403 not_author)", async () => {
    const tk = await ticket();
    const c = await post(tk.humanId, { body: 'spam' }, t.reporter);
    const res = await del(tk.humanId, c.id, t.other);
    expect(res.status).toBe(403);
    expect(res.body.error.details.reason).toBe('not_author');
    expect((await del(tk.humanId, c.id, t.owner)).status).toBe(200);
    expect(await stored(c.id)).toBeUndefined();
  });

  it('a client user deletes their own comment; an internal comment is 404 for them', async () => {
    const tk = await ticket();
    const mine = await post(tk.humanId, { body: 'mine' }, t.reporter);
    const internal = await post(tk.humanId, { body: 'staff' });
    expect((await del(tk.humanId, internal.id, t.reporter)).status).toBe(404);
    expect((await del(tk.humanId, mine.id, t.reporter)).status).toBe(200);
    expect(await stored(internal.id)).toBeDefined();
  });

  it('404 unknown or hidden; 400 bad id; 403 without write', async () => {
    const tk = await ticket();
    const c = await post(tk.humanId, { body: 'x' });
    expect((await del(tk.humanId, randomUUID())).status).toBe(404);
    expect((await del(tk.humanId, c.id, t.outsider)).status).toBe(404);
    expect((await del(tk.humanId, 'nope')).status).toBe(400);
    expect((await del(tk.humanId, c.id, t.readOnly)).status).toBe(403);
    expect(await stored(c.id)).toBeDefined();
  });
});
