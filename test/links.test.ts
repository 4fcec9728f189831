import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

let app: TestApp;
let ws: Workspace;
let project: { id: string; key: string };
let hiddenProject: { id: string; key: string };
let member: Person;
let memberToken: string;
let limitedToken: string;
let readOnlyToken: string;
let ownerToken: string;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  const owner = await makeUser(sql, ws, { role: 'owner' });
  member = await makeUser(sql, ws, { role: 'member' });
  const limited = await makeUser(sql, ws, { role: 'member' });
  project = await makeProject(sql, ws, { members: [{ person: member }, { person: limited, access: 'limited' }] });
  hiddenProject = await makeProject(sql, ws);
  ownerToken = (await makeToken(sql, ws, owner)).token;
  memberToken = (await makeToken(sql, ws, member)).token;
  limitedToken = (await makeToken(sql, ws, limited)).token;
  readOnlyToken = (await makeToken(sql, ws, member, { scopes: ['read'] })).token;
});
afterAll(() => app.close());

const link = (ref: string, body: unknown, token = memberToken) => app.call('POST', `/api/w/${ws.slug}/tickets/${ref}/links`, { token, body });
const unlink = (ref: string, linkId: string, token = memberToken) => app.call('DELETE', `/api/w/${ws.slug}/tickets/${ref}/links/${linkId}`, { token });
const ticket = () => makeTicket(app.db.sql, ws, { projectId: project.id });
const linksOf = (id: string) =>
  app.db.sql<{ id: string; source_id: string; target_id: string; kind: string }[]>`
    select id, source_id, target_id, kind from ticket_links where source_id = ${id} or target_id = ${id} order by created_at`;
const events = (id: string, kind: string) =>
  app.db.sql<{ payload: any }[]>`select payload from ticket_events where ticket_id = ${id} and kind = ${kind} order by created_at, id`;

/** A blocking chain of `edges` links: [first blocker, ..., last blocked]. */
async function blockingChain(edges: number) {
  const out = [await ticket()];
  for (let i = 0; i < edges; i++) {
    const next = await ticket();
    expect((await link(out[out.length - 1]!.humanId, { targetId: next.id, kind: 'blocks' })).status).toBe(201);
    out.push(next);
  }
  return out;
}

describe('POST /tickets/{ref}/links', () => {
  it('adds a blocks link: 201 with its id, stored from this ticket to the target, events on both tickets', async () => {
    const [a, b] = [await ticket(), await ticket()];
    const res = await link(a.humanId, { targetId: b.id, kind: 'blocks' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(await linksOf(a.id)).toEqual([{ id: res.body.id, source_id: a.id, target_id: b.id, kind: 'blocks' }]);
    expect((await events(a.id, 'link_added')).map((e) => e.payload)).toEqual([{ linkId: res.body.id, kind: 'blocks', direction: 'outgoing', otherId: b.id }]);
    expect((await events(b.id, 'link_added')).map((e) => e.payload)).toEqual([{ linkId: res.body.id, kind: 'blocks', direction: 'incoming', otherId: a.id }]);
  });

  it('an existing link is not duplicated: 201 with id null and no new events', async () => {
    const [a, b] = [await ticket(), await ticket()];
    expect((await link(a.humanId, { targetId: b.id, kind: 'blocks' })).body.id).toBeTruthy();
    const again = await link(a.id, { targetId: b.id, kind: 'blocks' });
    expect(again.status).toBe(201);
    expect(again.body).toEqual({ id: null });
    expect(await linksOf(a.id)).toHaveLength(1);
    expect(await events(a.id, 'link_added')).toHaveLength(1);
  });

  it('relates and duplicates are symmetric: B→A counts as A→B', async () => {
    for (const kind of ['relates', 'duplicates']) {
      const [a, b] = [await ticket(), await ticket()];
      expect((await link(a.humanId, { targetId: b.id, kind })).body.id).toBeTruthy();
      const reverse = await link(b.humanId, { targetId: a.id, kind });
      expect(reverse.status).toBe(201);
      expect(reverse.body).toEqual({ id: null });
      expect(await linksOf(a.id)).toHaveLength(1);
    }
  });

  it('different kinds between the same two tickets are separate links', async () => {
    const [a, b] = [await ticket(), await ticket()];
    for (const kind of ['blocks', 'relates', 'duplicates']) expect((await link(a.humanId, { targetId: b.id, kind })).body.id).toBeTruthy();
    expect(await linksOf(a.id)).toHaveLength(3);
  });

  it('400 self_link', async () => {
    const a = await ticket();
    const res = await link(a.humanId, { targetId: a.id, kind: 'relates' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid', details: { reason: 'self_link' } });
    expect(await linksOf(a.id)).toHaveLength(0);
  });

  it('409 dependency_cycle for the reverse of a blocks link and for a longer loop', async () => {
    const [a, b, c] = await blockingChain(2);
    const direct = await link(b!.humanId, { targetId: a!.id, kind: 'blocks' });
    expect(direct.status).toBe(409);
    expect(direct.body.error).toMatchObject({ code: 'conflict', details: { reason: 'dependency_cycle' } });
    const loop = await link(c!.humanId, { targetId: a!.id, kind: 'blocks' });
    expect(loop.status).toBe(409);
    expect(loop.body.error.details.reason).toBe('dependency_cycle');
    expect(await linksOf(c!.id)).toHaveLength(1);
    // relating them is fine: only blocking links make cycles
    expect((await link(c!.humanId, { targetId: a!.id, kind: 'relates' })).status).toBe(201);
  });

  it('a blocking chain of exactly 10 edges is allowed; 11 is 409 dependency_depth with depth', async () => {
    const c = await blockingChain(10);
    const extra = await ticket();
    const after = await link(c[10]!.humanId, { targetId: extra.id, kind: 'blocks' });
    expect(after.status).toBe(409);
    expect(after.body.error).toMatchObject({ code: 'conflict', details: { reason: 'dependency_depth', depth: 11 } });
    const before = await link(extra.humanId, { targetId: c[0]!.id, kind: 'blocks' });
    expect(before.body.error.details).toMatchObject({ reason: 'dependency_depth', depth: 11 });
    expect(await linksOf(extra.id)).toHaveLength(0);
  });

  it('joining two chains counts both sides', async () => {
    const left = await blockingChain(5);
    const right = await blockingChain(5);
    const res = await link(left[5]!.humanId, { targetId: right[0]!.id, kind: 'blocks' });
    expect(res.body.error.details).toMatchObject({ reason: 'dependency_depth', depth: 11 });
    const shortRight = await blockingChain(4);
    expect((await link(left[5]!.humanId, { targetId: shortRight[0]!.id, kind: 'blocks' })).status).toBe(201);
  });

  it('403 without edit rights (limited member) and for a token without write', async () => {
    const [a, b] = [await ticket(), await ticket()];
    const res = await link(a.humanId, { targetId: b.id, kind: 'relates' }, limitedToken);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
    const ro = await link(a.humanId, { targetId: b.id, kind: 'relates' }, readOnlyToken);
    expect(ro.status).toBe(403);
    expect(ro.body.error.details).toMatchObject({ reason: 'missing_scope' });
    expect(await linksOf(a.id)).toHaveLength(0);
  });

  it('404 when the source or the target is not visible or unknown', async () => {
    const hidden = await makeTicket(app.db.sql, ws, { projectId: hiddenProject.id });
    const a = await ticket();
    expect((await link(hidden.humanId, { targetId: a.id, kind: 'relates' })).status).toBe(404);
    const t = await link(a.humanId, { targetId: hidden.id, kind: 'relates' });
    expect(t.status).toBe(404);
    expect(t.body.error.code).toBe('not_found');
    expect((await link(a.humanId, { targetId: '6f1c2b7e-3d4a-4f5b-8c9d-0e1f2a3b4c5d', kind: 'relates' })).status).toBe(404);
    expect(await linksOf(a.id)).toHaveLength(0);
    expect((await link(a.humanId, { targetId: hidden.id, kind: 'relates' }, ownerToken)).status).toBe(201);
  });

  it('400 for bad bodies, and nothing changes', async () => {
    const [a, b] = [await ticket(), await ticket()];
    for (const body of [
      {},
      { targetId: b.id },
      { kind: 'blocks' },
      { targetId: b.id, kind: 'blocked_by' },
      { targetId: b.id, kind: 7 },
      { targetId: 'nope', kind: 'relates' },
      { targetId: 12, kind: 'relates' },
      { targetId: [b.id], kind: 'relates' },
    ]) {
      const res = await link(a.humanId, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid');
    }
    expect(await linksOf(a.id)).toHaveLength(0);
  });
});

describe('DELETE /tickets/{ref}/links/{linkId}', () => {
  it('removes a link from either end, with link_removed events on both tickets', async () => {
    const [a, b] = [await ticket(), await ticket()];
    const id = (await link(a.humanId, { targetId: b.id, kind: 'blocks' })).body.id;
    const res = await unlink(b.humanId, id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expect(await linksOf(a.id)).toHaveLength(0);
    expect((await events(a.id, 'link_removed')).map((e) => e.payload)).toEqual([{ linkId: id, kind: 'blocks', direction: 'outgoing', otherId: b.id }]);
    expect((await events(b.id, 'link_removed')).map((e) => e.payload)).toEqual([{ linkId: id, kind: 'blocks', direction: 'incoming', otherId: a.id }]);
    // gone: a second delete is 404
    expect((await unlink(a.humanId, id)).status).toBe(404);
  });

  it('404 when the link does not touch this ticket, is unknown, or its other end is hidden', async () => {
    const [a, b, c] = [await ticket(), await ticket(), await ticket()];
    const id = (await link(a.humanId, { targetId: b.id, kind: 'relates' })).body.id;
    const res = await unlink(c.humanId, id);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
    expect((await unlink(a.humanId, '6f1c2b7e-3d4a-4f5b-8c9d-0e1f2a3b4c5d')).status).toBe(404);
    const hidden = await makeTicket(app.db.sql, ws, { projectId: hiddenProject.id });
    const hiddenLink = (await link(a.humanId, { targetId: hidden.id, kind: 'relates' }, ownerToken)).body.id;
    expect((await unlink(a.humanId, hiddenLink)).status).toBe(404);
    expect((await unlink(hidden.humanId, hiddenLink)).status).toBe(404);
    expect(await linksOf(a.id)).toHaveLength(2);
  });

  it('403 without edit rights; 400 for a linkId that is not a UUID', async () => {
    const [a, b] = [await ticket(), await ticket()];
    const id = (await link(a.humanId, { targetId: b.id, kind: 'relates' })).body.id;
    const res = await unlink(a.humanId, id, limitedToken);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
    expect((await unlink(a.humanId, id, readOnlyToken)).status).toBe(403);
    const bad = await unlink(a.humanId, 'not-a-uuid');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toMatchObject({ field: 'linkId' });
    expect(await linksOf(a.id)).toHaveLength(1);
  });
});
