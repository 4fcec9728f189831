import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  addViewers,
  makeClient,
  makeLink,
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
import { mcpSession, type McpSession } from './helpers/mcp.ts';

const NOW = new Date('2030-03-10T12:00:00.000Z');
const day = (d: number) => new Date(NOW.getTime() + d * 86_400_000).toISOString().slice(0, 10);
const daysAgo = (d: number) => new Date(NOW.getTime() - d * 86_400_000);

let app: TestApp;
let ws: Workspace;
let member: Person;
let other: Person;
let web: { id: string; key: string };
let ops: { id: string; key: string };
let hidden: { id: string; key: string };
let token: string;
let s: McpSession;
const T: Record<string, { id: string; humanId: string }> = {};

const ids = (list: { items: { id: string }[] }) => list.items.map((t) => t.id);

beforeAll(async () => {
  app = await startTestApp({ now: () => NOW });
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  member = await makeUser(sql, ws, { name: 'Mia Member' });
  other = await makeUser(sql, ws);
  web = await makeProject(sql, ws, { members: [{ person: member }, { person: other }] });
  ops = await makeProject(sql, ws, { members: [{ person: member }] });
  hidden = await makeProject(sql, ws, { members: [{ person: other }] });
  const recent = daysAgo(1);
  const mk = (key: string, o: Parameters<typeof makeTicket>[2]) => makeTicket(sql, ws, { updatedAt: recent, ...o }).then((t) => (T[key] = t));

  await mk('urgent', { projectId: web.id, title: 'Urgent', assigneeId: member.id, priorityKey: 'urgent' });
  await mk('assignedDue', { projectId: web.id, title: 'Assigned, due soon', assigneeId: member.id, dueDate: day(3) });
  await mk('assignedDone', { projectId: web.id, assigneeId: member.id, stateKey: 'done' });
  await mk('assignedArchived', { projectId: web.id, assigneeId: member.id, archived: true });
  await mk('overdue', { projectId: web.id, title: 'Overdue', reporterId: member.id, dueDate: day(-2) });
  await mk('overdueClosed', { projectId: web.id, reporterId: member.id, dueDate: day(-2), stateKey: 'done' });
  await mk('overdueOthers', { projectId: web.id, title: 'Someone else overdue', reporterId: other.id, dueDate: day(-1) });
  await mk('dueToday', { projectId: ops.id, title: 'Due today', dueDate: day(0) });
  await addViewers(sql, T.dueToday!.id, [member.id]);
  await mk('dueLater', { projectId: web.id, reporterId: member.id, dueDate: day(7) });
  await mk('blocked', { projectId: web.id, title: 'Blocked', reporterId: member.id });
  await mk('blocker', { projectId: web.id, title: 'Blocker' });
  await mk('blockedByClosed', { projectId: web.id, reporterId: member.id });
  await mk('closedBlocker', { projectId: web.id, stateKey: 'done' });
  await mk('blockedByHidden', { projectId: web.id, reporterId: member.id });
  await mk('hiddenBlocker', { projectId: hidden.id });
  await makeLink(sql, ws, { sourceId: T.blocker!.id, targetId: T.blocked!.id, kind: 'blocks' });
  await makeLink(sql, ws, { sourceId: T.closedBlocker!.id, targetId: T.blockedByClosed!.id, kind: 'blocks' });
  await makeLink(sql, ws, { sourceId: T.hiddenBlocker!.id, targetId: T.blockedByHidden!.id, kind: 'blocks' });
  await makeLink(sql, ws, { sourceId: T.blocker!.id, targetId: T.overdue!.id, kind: 'relates' });
  await mk('stale', { projectId: web.id, title: 'Stale', reporterId: member.id, updatedAt: daysAgo(20) });
  await mk('staleClosed', { projectId: web.id, reporterId: member.id, stateKey: 'done', updatedAt: daysAgo(30) });

  // time: billable and unbilled minutes the member logged, net of corrections
  await makePeriod(sql, ws, { start: '2030-03-01', end: '2030-03-31' });
  await mk('worked', { projectId: web.id, title: 'Worked on', stateKey: 'done' });
  await mk('workedMore', { projectId: ops.id, title: 'Worked on more' });
  await mk('corrected', { projectId: web.id });
  await mk('othersTime', { projectId: web.id });
  const e = (ticket: string, minutes: number, o: { billable?: boolean; billed?: boolean; userId?: string; correctsEntryId?: string } = {}) =>
    makeTimeEntry(sql, ws, { ticketId: T[ticket]!.id, userId: o.userId ?? member.id, spentOn: '2030-03-05', minutes, ...o });
  await e('worked', 60);
  await e('worked', 30, { billed: true });
  await e('worked', 15, { billable: false });
  await e('workedMore', 120);
  const orig = await e('corrected', 40);
  await e('corrected', -40, { correctsEntryId: orig.id });
  await e('othersTime', 500, { userId: other.id });

  token = (await makeToken(sql, ws, member)).token;
  s = await mcpSession(app, token);
});
afterAll(async () => {
  await s.close();
  await app.close();
});

describe('get_context_pack', () => {
  it("the caller's lists in one call, each in its order", async () => {
    const pack = await s.ok('get_context_pack', {});
    expect(pack.today).toBe('2030-03-10');
    expect(pack.scope).toBe('mine');
    expect(ids(pack.assigned)).toEqual([T.urgent!.id, T.assignedDue!.id]);
    expect(ids(pack.overdue)).toEqual([T.overdue!.id]);
    expect(ids(pack.dueSoon)).toEqual([T.dueToday!.id, T.assignedDue!.id]);
    expect(ids(pack.blocked)).toEqual([T.blocked!.id]);
    expect(ids(pack.stale)).toEqual([T.stale!.id]);
    expect(pack.unbilled.items.map((t: any) => [t.title, t.unbilledMinutes])).toEqual([
      ['Worked on more', 120],
      ['Worked on', 60],
    ]);
    for (const k of ['assigned', 'overdue', 'dueSoon', 'blocked', 'stale', 'unbilled']) expect(pack[k].omitted, k).toBe(0);
    expect(pack.assigned.items[0]).toEqual({
      id: T.urgent!.id,
      humanId: T.urgent!.humanId,
      title: 'Urgent',
      state: 'Todo',
      assignee: 'Mia Member',
      priority: 'Urgent',
      dueDate: null,
      updatedAt: expect.any(String),
    });
    const text = ((await s.call('get_context_pack', {})).content as any)[0].text;
    expect(text).toContain('## overdue');
    expect(text).toContain(`${T.overdue!.humanId} [Todo, Normal, due ${day(-2)}] Overdue`);
  });

  it('scope visible widens overdue, due soon, blocked and stale to every ticket the caller sees', async () => {
    const pack = await s.ok('get_context_pack', { scope: 'visible' });
    expect(ids(pack.overdue)).toEqual([T.overdue!.id, T.overdueOthers!.id]);
    expect(ids(pack.assigned)).toEqual([T.urgent!.id, T.assignedDue!.id]);
  });

  it('each list is capped by limit and says how many it left out; project narrows', async () => {
    const pack = await s.ok('get_context_pack', { limit: 1 });
    expect(pack.assigned).toMatchObject({ items: [{ id: T.urgent!.id }], omitted: 1 });
    expect(pack.dueSoon.omitted).toBe(1);
    expect(pack.unbilled).toMatchObject({ items: [{ title: 'Worked on more' }], omitted: 1 });
    const ops1 = await s.ok('get_context_pack', { project: ops.key });
    expect(ids(ops1.dueSoon)).toEqual([T.dueToday!.id]);
    expect(ids(ops1.assigned)).toEqual([]);
    expect(ops1.unbilled.items.map((t: any) => t.title)).toEqual(['Worked on more']);
  });

  it("errors: bad limit, unknown project, a project outside the token's allow-list", async () => {
    expect(await s.fail('get_context_pack', { limit: 0 })).toMatchObject({ code: 'invalid', details: { field: 'limit' } });
    expect(await s.fail('get_context_pack', { scope: 'everything' })).toMatchObject({ code: 'invalid', details: { field: 'scope' } });
    expect(await s.fail('get_context_pack', { project: 'NOPE' })).toMatchObject({ code: 'invalid', reason: 'unknown_project' });
    const restricted = await mcpSession(app, (await makeToken(app.db.sql, ws, member, { projectIds: [ops.id, hidden.id] })).token);
    const pack = await restricted.ok('get_context_pack', {});
    expect(ids(pack.assigned)).toEqual([]);
    expect(ids(pack.dueSoon)).toEqual([T.dueToday!.id]);
    expect(pack.unbilled.items.map((t: any) => t.title)).toEqual(['Worked on more']);
    // the core's answer, as over REST (the schema no longer lists the allowed ids), by id or key
    const outside = { code: 'forbidden', reason: 'project_not_allowed', details: { projectId: web.id } };
    expect(await restricted.fail('get_context_pack', { project: web.id })).toMatchObject(outside);
    expect(await restricted.fail('get_context_pack', { project: web.key })).toMatchObject(outside);
    await restricted.close();
  });

  it('a client user gets their own lists, and no unbilled time', async () => {
    const client = await makeClient(app.db.sql, ws);
    const person = await makeUser(app.db.sql, ws, { role: 'client', clientId: client.id });
    const t = await makeTicket(app.db.sql, ws, { projectId: web.id, title: 'Client ask', reporterId: person.id, dueDate: day(-1), updatedAt: daysAgo(1) });
    const c = await mcpSession(app, (await makeToken(app.db.sql, ws, person)).token);
    const pack = await c.ok('get_context_pack', { scope: 'visible' });
    expect(ids(pack.overdue)).toEqual([t.id]);
    expect(pack.unbilled).toEqual({ items: [], omitted: 0 });
    await c.close();
  });
});
