import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

let app: TestApp;
let ws: Workspace;
let project: { id: string; key: string };
let hiddenProject: { id: string; key: string };
let owner: Person;
let member: Person;
let limited: Person;
let ownerToken: string;
let memberToken: string;
let limitedToken: string;
let readOnlyToken: string;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  owner = await makeUser(sql, ws, { role: 'owner' });
  member = await makeUser(sql, ws, { role: 'member' });
  limited = await makeUser(sql, ws, { role: 'member' });
  project = await makeProject(sql, ws, { members: [{ person: member }, { person: limited, access: 'limited' }] });
  hiddenProject = await makeProject(sql, ws);
  ownerToken = (await makeToken(sql, ws, owner)).token;
  memberToken = (await makeToken(sql, ws, member)).token;
  limitedToken = (await makeToken(sql, ws, limited)).token;
  readOnlyToken = (await makeToken(sql, ws, member, { scopes: ['read'] })).token;
});
afterAll(() => app.close());

const put = (ref: string, body: unknown, token = memberToken) => app.call('PUT', `/api/w/${ws.slug}/tickets/${ref}/parent`, { token, body });
const ticket = (opts: Parameters<typeof makeTicket>[2] = {}) => makeTicket(app.db.sql, ws, { projectId: project.id, ...opts });
const parentOf = async (id: string) => (await app.db.sql<{ parent_id: string | null }[]>`select parent_id from tickets where id = ${id}`)[0]!.parent_id;
const events = (id: string, kind: string) =>
  app.db.sql<
    { payload: any; actor_id: string }[]
  >`select payload, actor_id from ticket_events where ticket_id = ${id} and kind = ${kind} order by created_at, id`;

/** A chain of `edges` parent edges: returns [root, ..., leaf]. */
async function chain(edges: number): Promise<{ id: string; humanId: string }[]> {
  const out = [await ticket()];
  for (let i = 0; i < edges; i++) out.push(await ticket({ parentId: out[out.length - 1]!.id }));
  return out;
}

describe('PUT /tickets/{ref}/parent', () => {
  it('sets the parent by human id, records parent_changed and bumps updatedAt', async () => {
    const parent = await ticket();
    const child = await ticket({ updatedAt: new Date('2020-01-01T00:00:00Z') });
    const res = await put(child.humanId, { parentId: parent.id });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expect(await parentOf(child.id)).toBe(parent.id);
    const ev = await events(child.id, 'parent_changed');
    expect(ev).toHaveLength(1);
    expect(ev[0]).toMatchObject({ payload: { old: null, new: parent.id }, actor_id: member.id });
    const [row] = await app.db.sql<{ updated_at: Date }[]>`select updated_at from tickets where id = ${child.id}`;
    expect(row!.updated_at.getTime()).toBeGreaterThan(new Date('2020-01-01T00:00:00Z').getTime());
  });

  it('accepts the ticket UUID as ref, moves to another parent, and null clears it', async () => {
    const [a, b] = [await ticket(), await ticket()];
    const child = await ticket({ parentId: a.id });
    expect((await put(child.id, { parentId: b.id })).status).toBe(200);
    expect(await parentOf(child.id)).toBe(b.id);
    expect((await put(child.id, { parentId: null })).status).toBe(200);
    expect(await parentOf(child.id)).toBeNull();
    const ev = await events(child.id, 'parent_changed');
    expect(ev.map((e) => e.payload)).toEqual([
      { old: a.id, new: b.id },
      { old: b.id, new: null },
    ]);
  });

  it('setting the current parent again changes nothing and writes no event', async () => {
    const parent = await ticket();
    const child = await ticket({ parentId: parent.id });
    expect((await put(child.humanId, { parentId: parent.id })).status).toBe(200);
    expect((await put(child.humanId, { parentId: null }, memberToken)).status).toBe(200);
    expect((await put(child.humanId, { parentId: null })).status).toBe(200);
    expect(await events(child.id, 'parent_changed')).toHaveLength(1);
  });

  it('a ticket that gains its first child loses its own estimate (recorded on it)', async () => {
    const parent = await ticket({ estimateMinutes: 90 });
    const child = await ticket({ estimateMinutes: 30 });
    expect((await put(child.humanId, { parentId: parent.id })).status).toBe(200);
    const [row] = await app.db.sql<{ estimate_minutes: number | null }[]>`select estimate_minutes from tickets where id = ${parent.id}`;
    expect(row!.estimate_minutes).toBeNull();
    const ev = await events(parent.id, 'field_changed');
    expect(ev.map((e) => e.payload)).toEqual([{ field: 'estimateMinutes', old: 90, new: null, reason: 'became_parent' }]);
    const [kid] = await app.db.sql<{ estimate_minutes: number | null }[]>`select estimate_minutes from tickets where id = ${child.id}`;
    expect(kid!.estimate_minutes).toBe(30);
  });

  it('400 self_parent', async () => {
    const t = await ticket();
    const res = await put(t.humanId, { parentId: t.id });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid', details: { reason: 'self_parent' } });
    expect(await parentOf(t.id)).toBeNull();
  });

  it('409 own_ancestor when the new parent is a descendant of the ticket', async () => {
    const [root, mid, leaf] = await chain(2);
    for (const descendant of [mid!, leaf!]) {
      const res = await put(root!.humanId, { parentId: descendant.id });
      expect(res.status).toBe(409);
      expect(res.body.error).toMatchObject({ code: 'conflict', details: { reason: 'own_ancestor' } });
    }
    expect(await parentOf(root!.id)).toBeNull();
    expect(await events(root!.id, 'parent_changed')).toHaveLength(0);
  });

  it('409 parent_cycle when the new parent sits on a loop that already exists (damaged data)', async () => {
    const [x, y] = [await ticket(), await ticket()];
    await app.db.sql`update tickets set parent_id = ${y.id} where id = ${x.id}`;
    await app.db.sql`update tickets set parent_id = ${x.id} where id = ${y.id}`;
    const t = await ticket();
    const res = await put(t.humanId, { parentId: x.id });
    expect(res.status).toBe(409);
    expect(res.body.error.details.reason).toBe('parent_cycle');
    expect(await parentOf(t.id)).toBeNull();
  });

  it('a chain of exactly 10 edges is allowed; 11 is 409 parent_depth with depth', async () => {
    const c = await chain(9);
    const tenth = await ticket();
    expect((await put(tenth.humanId, { parentId: c[9]!.id })).status).toBe(200);
    const eleventh = await ticket();
    const res = await put(eleventh.humanId, { parentId: tenth.id });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'conflict', details: { reason: 'parent_depth', depth: 11 } });
    expect(await parentOf(eleventh.id)).toBeNull();
  });

  it('the depth counts the descendants that move along with the ticket', async () => {
    const top = await chain(7); // 7 edges above the new parent's leaf
    const sub = await chain(3); // the ticket, with 3 levels below it
    const res = await put(sub[0]!.humanId, { parentId: top[7]!.id });
    expect(res.status).toBe(409);
    expect(res.body.error.details).toMatchObject({ reason: 'parent_depth', depth: 7 + 1 + 3 });
    expect(await parentOf(sub[0]!.id)).toBeNull();
    const shorter = await chain(5);
    // 5 edges above + 1 + 3 below = 9: allowed
    expect((await put(sub[0]!.humanId, { parentId: shorter[5]!.id })).status).toBe(200);
  });

  it('403 without edit rights: a limited member, and a token without write', async () => {
    const [p, t] = [await ticket(), await ticket()];
    const res = await put(t.humanId, { parentId: p.id }, limitedToken);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
    const ro = await put(t.humanId, { parentId: p.id }, readOnlyToken);
    expect(ro.status).toBe(403);
    expect(ro.body.error.details).toMatchObject({ reason: 'missing_scope', scope: 'write' });
    expect(await parentOf(t.id)).toBeNull();
  });

  it('404 when the ticket or the parent is not visible, or unknown', async () => {
    const hidden = await makeTicket(app.db.sql, ws, { projectId: hiddenProject.id });
    const mine = await ticket();
    const a = await put(hidden.humanId, { parentId: mine.id });
    expect(a.status).toBe(404);
    expect(a.body.error.code).toBe('not_found');
    const b = await put(mine.humanId, { parentId: hidden.id });
    expect(b.status).toBe(404);
    expect(b.body.error.code).toBe('not_found');
    expect((await put(mine.humanId, { parentId: '6f1c2b7e-3d4a-4f5b-8c9d-0e1f2a3b4c5d' })).status).toBe(404);
    expect((await put('NOPE-1', { parentId: mine.id })).status).toBe(404);
    expect(await parentOf(mine.id)).toBeNull();
    // the owner sees everything
    expect((await put(hidden.humanId, { parentId: mine.id }, ownerToken)).status).toBe(200);
  });

  it('400 for bad bodies, and nothing changes', async () => {
    const t = await ticket();
    for (const body of [{}, { parentId: 'not-a-uuid' }, { parentId: 42 }, { parentId: [] }, { parentId: true }, []]) {
      const res = await put(t.humanId, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid');
    }
    expect((await put('x'.repeat(61), { parentId: null })).status).toBe(400);
    expect(await parentOf(t.id)).toBeNull();
    expect(await events(t.id, 'parent_changed')).toHaveLength(0);
  });
});

describe('parent writes under concurrency', () => {
  it('two opposite parent writes at once never store a cycle', async () => {
    for (let i = 0; i < 25; i++) {
      const [a, b] = [await ticket(), await ticket()];
      const [r1, r2] = await Promise.all([put(a.humanId, { parentId: b.id }), put(b.humanId, { parentId: a.id })]);
      expect([r1.status, r2.status].sort()).toEqual([200, 409]);
      expect([r1, r2].find((r) => r.status === 409)!.body.error.details.reason).toBe('own_ancestor');
      const [pa, pb] = [await parentOf(a.id), await parentOf(b.id)];
      expect(pa === b.id && pb === a.id).toBe(false);
      expect(pa === b.id || pb === a.id).toBe(true);
    }
  });

  it('two writes that are each within the depth limit but not together: one is refused', async () => {
    for (let i = 0; i < 10; i++) {
      const x = await chain(5);
      const z = await ticket();
      const y = await chain(4);
      const [r1, r2] = await Promise.all([put(z.humanId, { parentId: x[5]!.id }), put(y[0]!.humanId, { parentId: z.id })]);
      expect([r1.status, r2.status].sort()).toEqual([200, 409]);
      expect([r1, r2].find((r) => r.status === 409)!.body.error.details).toMatchObject({ reason: 'parent_depth', depth: 11 });
    }
  });
});
