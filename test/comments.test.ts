import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makeClient, makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

let app: TestApp;
let ws: Workspace;
let projectId: string;
let hiddenProjectId: string;
let member: Person;
let reporter: Person;
let colleague: Person;
let stranger: Person;
let t: Record<'member' | 'limited' | 'outsider' | 'readOnly' | 'reporter' | 'colleague' | 'noRead', string>;
let memberSession: SessionCookie;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  const a = await makeClient(sql, ws, { name: 'Acme' });
  const c = await makeClient(sql, ws, { name: 'Other' });
  member = await makeUser(sql, ws, { role: 'member', name: 'Max Member' });
  const limited = await makeUser(sql, ws, { role: 'member' });
  const outsider = await makeUser(sql, ws, { role: 'member' });
  reporter = await makeUser(sql, ws, { role: 'client', clientId: a.id, name: 'Rita Reporter' });
  colleague = await makeUser(sql, ws, { role: 'client', clientId: a.id, name: 'Carl Colleague' });
  stranger = await makeUser(sql, ws, { role: 'client', clientId: c.id, name: 'Sam Stranger' });
  projectId = (await makeProject(sql, ws, { billingClientId: a.id, members: [{ person: member }, { person: limited, access: 'limited' }] })).id;
  hiddenProjectId = (await makeProject(sql, ws)).id;
  t = {
    member: (await makeToken(sql, ws, member)).token,
    limited: (await makeToken(sql, ws, limited)).token,
    outsider: (await makeToken(sql, ws, outsider)).token,
    readOnly: (await makeToken(sql, ws, member, { scopes: ['read'] })).token,
    noRead: (await makeToken(sql, ws, member, { scopes: ['write'] })).token,
    reporter: (await makeToken(sql, ws, reporter)).token,
    colleague: (await makeToken(sql, ws, colleague)).token,
  };
  memberSession = await login(app, member.email, member.password);
});
afterAll(() => app.close());

const post = (ref: string, body: unknown, token = t.member) => app.call('POST', `/api/w/${ws.slug}/tickets/${ref}/comments`, { token, body });
const list = (ref: string, query = '', token = t.member) => app.call('GET', `/api/w/${ws.slug}/tickets/${ref}/comments${query}`, { token });
const ticket = () => makeTicket(app.db.sql, ws, { projectId, reporterId: reporter.id });
const count = async (id: string) => {
  const [row] = await app.db.sql<{ stored: number; counter: number }[]>`
    select (select count(*)::int from comments where ticket_id = ${id}) as stored, comment_count as counter from tickets where id = ${id}`;
  return row!;
};
const events = (id: string, kind: string) =>
  app.db.sql<
    { payload: any; actor_id: string }[]
  >`select payload, actor_id from ticket_events where ticket_id = ${id} and kind = ${kind} order by created_at, id`;

describe('POST /tickets/{ref}/comments', () => {
  it('a workspace user posts an internal comment by default: 201 Comment, source api with a token, counter and event', async () => {
    const tk = await ticket();
    const res = await post(tk.humanId, { body: 'Looks **fine**. <script>alert(1)</script> [x](javascript:alert(1)) https://example.com' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      body: 'Looks **fine**. <script>alert(1)</script> [x](javascript:alert(1)) https://example.com',
      bodyHtml: expect.stringContaining('<strong>fine</strong>'),
      audience: 'internal',
      author: { id: member.id, name: 'Max Member', clientName: null },
      source: 'api',
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      updatedAt: res.body.createdAt,
      edited: false,
    });
    expect(res.body.bodyHtml).not.toContain('<script>');
    expect(res.body.bodyHtml).not.toMatch(/href="javascript/);
    expect(res.body.bodyHtml).toContain('rel="noopener noreferrer nofollow"');
    expect(await count(tk.id)).toEqual({ stored: 1, counter: 1 });
    const ev = await events(tk.id, 'comment_added');
    expect(ev).toEqual([{ payload: { commentId: res.body.id, audience: 'internal' }, actor_id: member.id }]);
  });

  it('a session comment carries source ui; a limited member may comment', async () => {
    const tk = await ticket();
    const res = await app.call('POST', `/api/w/${ws.slug}/tickets/${tk.humanId}/comments`, { session: memberSession, body: { body: 'from the browser' } });
    expect(res.status).toBe(201);
    expect(res.body.source).toBe('ui');
    expect((await post(tk.humanId, { body: 'limited here', audience: 'client' }, t.limited)).status).toBe(201);
    expect(await count(tk.id)).toEqual({ stored: 2, counter: 2 });
  });

  it('a client user writes client comments (the default); internal is 403 audience_forbidden', async () => {
    const tk = await ticket();
    const res = await post(tk.humanId, { body: 'Any news?' }, t.reporter);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ audience: 'client', author: { id: reporter.id, name: 'Rita Reporter', clientName: 'Acme' } });
    const internal = await post(tk.humanId, { body: 'psst', audience: 'internal' }, t.reporter);
    expect(internal.status).toBe(403);
    expect(internal.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'audience_forbidden' } });
    expect(await count(tk.id)).toEqual({ stored: 1, counter: 1 });
  });

  it('mentioning a client person of the ticket client in a client comment makes them a viewer', async () => {
    const tk = await ticket();
    expect((await list(tk.humanId, '', t.colleague)).status).toBe(404);
    const res = await post(tk.humanId, { body: '@Carl please check', audience: 'client', mentions: [colleague.id, member.id, reporter.id] });
    expect(res.status).toBe(201);
    const viewers = await app.db.sql<{ identity_id: string }[]>`select identity_id from ticket_viewers where ticket_id = ${tk.id}`;
    expect(viewers.map((v) => v.identity_id)).toEqual([colleague.id]);
    expect((await events(tk.id, 'viewer_added')).map((e) => e.payload)).toEqual([{ identityId: colleague.id }]);
    const seen = await list(tk.humanId, '', t.colleague);
    expect(seen.status).toBe(200);
    expect(seen.body.items.map((c: any) => c.id)).toEqual([res.body.id]);
  });

  it('403 share_forbidden for a denied mention (another client, or a client person in an internal comment); nothing is stored', async () => {
    const tk = await ticket();
    const other = await post(tk.humanId, { body: 'hi', audience: 'client', mentions: [stranger.id] });
    expect(other.status).toBe(403);
    expect(other.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'share_forbidden', identityId: stranger.id, name: 'Sam Stranger' } });
    const internal = await post(tk.humanId, { body: 'hi', mentions: [colleague.id] });
    expect(internal.status).toBe(403);
    expect(internal.body.error.details).toMatchObject({ reason: 'share_forbidden', identityId: colleague.id, name: 'Carl Colleague' });
    expect(await count(tk.id)).toEqual({ stored: 0, counter: 0 });
    const [v] = await app.db.sql<{ n: number }[]>`select count(*)::int as n from ticket_viewers where ticket_id = ${tk.id}`;
    expect(v!.n).toBe(0);
  });

  it('404 unknown_person for a mention that is not a member', async () => {
    const tk = await ticket();
    const unknown = randomUUID();
    const res = await post(tk.humanId, { body: 'hi', mentions: [unknown] });
    expect(res.status).toBe(404);
    expect(res.body.error.details).toMatchObject({ reason: 'unknown_person', identityId: unknown });
    expect(await count(tk.id)).toEqual({ stored: 0, counter: 0 });
  });

  it('400 for bad bodies; 50,000 characters are fine', async () => {
    const tk = await ticket();
    const many = Array.from({ length: 21 }, () => randomUUID());
    for (const body of [
      {},
      { body: '' },
      { body: '   \n ' },
      { body: 'x'.repeat(50_001) },
      { body: 42 },
      { body: 'ok', audience: 'public' },
      { body: 'ok', audience: null },
      { body: 'ok', mentions: many },
      { body: 'ok', mentions: ['x'] },
      { body: 'ok', mentions: 'x' },
    ]) {
      const res = await post(tk.humanId, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid');
    }
    expect(await count(tk.id)).toEqual({ stored: 0, counter: 0 });
    expect((await post(tk.humanId, { body: 'x'.repeat(50_000), unknownField: true })).status).toBe(201);
  });

  it('403 for a token without write; 404 for a hidden or unknown ticket', async () => {
    const tk = await ticket();
    const ro = await post(tk.humanId, { body: 'hi' }, t.readOnly);
    expect(ro.status).toBe(403);
    expect(ro.body.error.details).toMatchObject({ reason: 'missing_scope', scope: 'write' });
    const hidden = await post(tk.humanId, { body: 'hi' }, t.outsider);
    expect(hidden.status).toBe(404);
    expect(hidden.body.error.code).toBe('not_found');
    const h2 = await makeTicket(app.db.sql, ws, { projectId: hiddenProjectId });
    expect((await post(h2.humanId, { body: 'hi' })).status).toBe(404);
    expect((await post(h2.humanId, { body: 'hi' }, t.reporter)).status).toBe(404);
    expect(await count(tk.id)).toEqual({ stored: 0, counter: 0 });
  });
});

describe('GET /tickets/{ref}/comments', () => {
  it('oldest first; client users never see internal comments', async () => {
    const tk = await ticket();
    const ids: string[] = [];
    for (const [body, audience] of [
      ['one', 'internal'],
      ['two', 'client'],
      ['three', 'internal'],
      ['four', 'client'],
    ]) {
      ids.push((await post(tk.humanId, { body, audience })).body.id);
    }
    const staff = await list(tk.humanId);
    expect(staff.status).toBe(200);
    expect(staff.body.items.map((c: any) => c.body)).toEqual(['one', 'two', 'three', 'four']);
    expect(staff.body.nextCursor).toBeNull();
    const client = await list(tk.humanId, '', t.reporter);
    expect(client.body.items.map((c: any) => c.body)).toEqual(['two', 'four']);
    expect(client.body.items.every((c: any) => c.audience === 'client')).toBe(true);
    // a read-only token reads
    expect((await list(tk.humanId, '', t.readOnly)).body.items).toHaveLength(4);
  });

  it('pages with limit and cursor, also through comments created in the same instant', async () => {
    const tk = await ticket();
    await app.db.sql`
      insert into comments (workspace_id, ticket_id, author_id, audience, body, created_at, updated_at)
      select ${ws.id}, ${tk.id}, ${member.id}, 'internal', 'c' || n, timestamptz '2024-05-01 10:00:00.123456+00', timestamptz '2024-05-01 10:00:00.123456+00'
      from generate_series(1, 5) n`;
    await app.db.sql`
      insert into comments (workspace_id, ticket_id, author_id, audience, body, created_at, updated_at)
      values (${ws.id}, ${tk.id}, ${member.id}, 'internal', 'early', timestamptz '2024-05-01 10:00:00.123455+00', timestamptz '2024-05-01 10:00:00.123455+00'),
             (${ws.id}, ${tk.id}, ${member.id}, 'internal', 'late', timestamptz '2024-05-01 10:00:00.123457+00', timestamptz '2024-05-01 10:00:00.123457+00')`;
    const all = (await list(tk.humanId)).body.items.map((c: any) => c.id);
    expect(all).toHaveLength(7);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await list(tk.humanId, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.items.map((c: any) => c.id));
      cursor = res.body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(4);
    expect(seen).toEqual(all);
    const bodies = (await list(tk.humanId)).body.items.map((c: any) => c.body);
    expect(bodies[0]).toBe('early');
    expect(bodies[6]).toBe('late');
  });

  it('400 for a bad cursor or limit', async () => {
    const tk = await ticket();
    for (const q of [
      '?cursor=nope',
      `?cursor=${Buffer.from('["x","y"]').toString('base64url')}`,
      `?cursor=${'a'.repeat(201)}`,
      '?limit=0',
      '?limit=51',
      '?limit=abc',
      '?limit=1.5',
    ]) {
      const res = await list(tk.humanId, q);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid');
    }
    expect((await list(tk.humanId, '?cursor=nope')).body.error.details.reason).toBe('bad_cursor');
  });

  it('404 for a hidden ticket; 403 for a token without read', async () => {
    const tk = await ticket();
    expect((await list(tk.humanId, '', t.outsider)).status).toBe(404);
    const res = await list(tk.humanId, '', t.noRead);
    expect(res.status).toBe(403);
    expect(res.body.error.details).toMatchObject({ reason: 'missing_scope', scope: 'read' });
  });
});

describe('commentCount follows comments written and deleted through the API', () => {
  it('counts every audience for workspace users and only client comments for client users', async () => {
    const tk = await ticket();
    const count = async (token: string) => {
      const res = await app.call('GET', `/api/w/${ws.slug}/tickets?limit=50`, { token });
      return res.body.items.find((i: { id: string }) => i.id === tk.id)?.commentCount;
    };
    const internal = await post(tk.humanId, { body: 'internal note' });
    expect(internal.status).toBe(201);
    expect((await post(tk.humanId, { body: 'for the client', audience: 'client' })).status).toBe(201);
    expect(await count(t.member)).toBe(2);
    expect(await count(t.reporter)).toBe(1);
    const del = await app.call('DELETE', `/api/w/${ws.slug}/tickets/${tk.humanId}/comments/${internal.body.id}`, { token: t.member });
    expect(del.status).toBe(200);
    expect(await count(t.member)).toBe(1);
    const [row] = await app.db.sql<{ comment_count: number }[]>`select comment_count from tickets where id = ${tk.id}`;
    expect(row!.comment_count).toBe(1);
  });
});
