import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../src/core/auth/principal.ts';
import { getMyWork } from '../src/core/board/my.ts';
import { runOp } from '../src/core/operation.ts';
import { cachedPlanPool, connect, type Db } from '../src/db/connect.ts';
import { login, startTestApp, type TestApp } from './helpers/app.ts';
import { addViewers, makeClient, makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

// 20:00 UTC on 10 March: already 11 March in Kiritimati (UTC+14).
const NOW = new Date('2030-03-10T20:00:00.000Z');
const DAY = 86_400_000;
const day = (d: number) => new Date(NOW.getTime() + d * DAY).toISOString().slice(0, 10);
const CLOSED = new Set(['done', 'cancelled']);
const PRIORITY: Record<string, number> = { urgent: 0, high: 1, normal: 2, low: 3 };

interface Fixture {
  id: string;
  projectId: string | null;
  state: string;
  priority: string;
  assigneeId: string | null;
  reporterId: string | null;
  viewers: string[];
  due: string | null;
  archived: boolean;
  updatedAt: number;
}

let app: TestApp;
let ws: Workspace;
let p1: { id: string };
let p2: { id: string };
const people: Record<string, Person & { role: Role }> = {};
const tickets: Fixture[] = [];
let clock = 0;

async function ticket(f: Partial<Omit<Fixture, 'id' | 'updatedAt'>>): Promise<Fixture> {
  const full: Omit<Fixture, 'id'> = {
    projectId: p1.id,
    state: 'todo',
    priority: 'normal',
    assigneeId: null,
    reporterId: null,
    viewers: [],
    due: null,
    archived: false,
    ...f,
    updatedAt: NOW.getTime() - 10 * DAY + clock++ * 60_000,
  };
  const t = await makeTicket(app.db.sql, ws, {
    projectId: full.projectId,
    stateKey: full.state,
    priorityKey: full.priority,
    assigneeId: full.assigneeId,
    reporterId: full.reporterId,
    dueDate: full.due,
    archived: full.archived,
    updatedAt: new Date(full.updatedAt),
  });
  if (full.viewers.length) await addViewers(app.db.sql, t.id, full.viewers);
  const fixture = { ...full, id: t.id };
  tickets.push(fixture);
  return fixture;
}

beforeAll(async () => {
  app = await startTestApp({ now: () => NOW });
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  const clientA = await makeClient(sql, ws);
  const roles: [string, Role, string?][] = [
    ['owner', 'owner'],
    ['admin', 'admin'],
    ['member', 'member'],
    ['agent', 'agent'],
    ['elevated', 'client_elevated'],
    ['client', 'client'],
    ['islander', 'owner', 'Pacific/Kiritimati'],
    ['busy', 'member'],
  ];
  for (const [key, role, timezone] of roles) {
    people[key] = { ...(await makeUser(sql, ws, { role, clientId: role.startsWith('client') ? clientA.id : null, timezone })), role };
  }
  p1 = await makeProject(sql, ws, { billingClientId: clientA.id, members: [{ person: people.member! }, { person: people.agent! }, { person: people.busy! }] });
  p2 = await makeProject(sql, ws);

  // For every person: assigned (open, closed, archived; in p1, p2 and the Inbox), reported, watching.
  for (const key of ['owner', 'admin', 'member', 'agent', 'elevated', 'client']) {
    const me = people[key]!.id;
    await ticket({ assigneeId: me, state: 'todo', priority: 'high', due: day(2) });
    await ticket({ assigneeId: me, state: 'in_progress', priority: 'urgent' });
    await ticket({ assigneeId: me, state: 'in_review', priority: 'high' });
    await ticket({ assigneeId: me, state: 'done', priority: 'urgent' });
    await ticket({ assigneeId: me, state: 'todo', archived: true });
    await ticket({ assigneeId: me, projectId: p2.id, state: 'todo', due: day(-1) });
    await ticket({ assigneeId: me, projectId: null, state: 'triage', priority: 'high' });
    await ticket({ reporterId: me, state: 'done' });
    await ticket({ reporterId: me, projectId: p2.id, state: 'todo', priority: 'low' });
    await ticket({ reporterId: me, projectId: p2.id, archived: true });
    await ticket({ viewers: [me], projectId: p2.id, state: 'cancelled' });
    await ticket({ viewers: [me], projectId: p2.id, state: 'todo', archived: true });
  }
  // Due dates around the window, in p1, p2 and the Inbox.
  for (const projectId of [p1.id, p2.id, null]) {
    await ticket({ projectId, due: day(-30), priority: 'low' });
    await ticket({ projectId, due: day(-30), priority: 'urgent' });
    await ticket({ projectId, due: day(0) });
    await ticket({ projectId, due: day(6), state: 'in_progress' });
    await ticket({ projectId, due: day(7) });
    await ticket({ projectId, due: day(-2), state: 'done' });
    await ticket({ projectId, due: day(1), archived: true });
  }
  // A busy member: 55 open tickets assigned, reported and watched, most of them due soon: more than a list holds.
  const busy = people.busy!.id;
  for (let i = 0; i < 55; i++) {
    const due = i % 3 === 0 ? null : day((i % 10) - 3);
    await ticket({
      assigneeId: busy,
      reporterId: busy,
      viewers: [busy],
      priority: ['urgent', 'high', 'normal', 'low'][i % 4],
      due,
      state: i % 2 ? 'todo' : 'in_review',
    });
  }
});
afterAll(() => app.close());

interface Caller {
  me: string;
  role: Role;
  triage: boolean;
  projectIds: string[] | null;
  timezoneToday: string;
}

function visible(t: Fixture, c: Caller): boolean {
  if (c.projectIds && (t.projectId === null || !c.projectIds.includes(t.projectId))) return false;
  if (!c.triage && t.projectId === null) return false;
  const part = t.reporterId === c.me || t.viewers.includes(c.me);
  switch (c.role) {
    case 'owner':
    case 'admin':
      return true;
    case 'member':
    case 'agent':
      return (
        t.projectId === null ||
        (t.projectId === p1.id && [people.member!.id, people.agent!.id, people.busy!.id].includes(c.me)) ||
        part ||
        t.assigneeId === c.me
      );
    case 'client_elevated':
      return t.projectId === p1.id || part;
    case 'client':
      return part || t.assigneeId === c.me;
  }
}

const recent = (a: Fixture, b: Fixture) => b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : -1);
const byDue = (a: Fixture, b: Fixture) => (a.due === b.due ? 0 : a.due === null ? 1 : b.due === null ? -1 : a.due < b.due ? -1 : 1);

/** What GET /my must answer for `c`, straight from the fixture and the documented rules. */
function expected(c: Caller) {
  const mine = tickets.filter((t) => !t.archived && visible(t, c));
  const open = (t: Fixture) => !CLOSED.has(t.state);
  const ids = (xs: Fixture[]) => xs.slice(0, 50).map((t) => t.id);
  const soon = new Date(Date.parse(`${c.timezoneToday}T00:00:00Z`) + 6 * DAY).toISOString().slice(0, 10);
  return {
    assigned: ids(
      mine.filter((t) => open(t) && t.assigneeId === c.me).sort((a, b) => PRIORITY[a.priority]! - PRIORITY[b.priority]! || byDue(a, b) || recent(a, b)),
    ),
    reported: ids(mine.filter((t) => t.reporterId === c.me).sort(recent)),
    watching: ids(mine.filter((t) => t.viewers.includes(c.me)).sort(recent)),
    dueSoon: ids(
      mine
        .filter((t) => open(t) && t.due !== null && t.due <= soon)
        .sort((a, b) => byDue(a, b) || PRIORITY[a.priority]! - PRIORITY[b.priority]! || recent(a, b)),
    ),
  };
}

type Summary = { id: string };

type Lists = Record<'assigned' | 'reported' | 'watching' | 'dueSoon', string[]>;

async function my(token: string): Promise<Lists> {
  const res = await app.call('GET', `/api/w/${ws.slug}/my`, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(Object.keys(res.body).sort()).toEqual(['assigned', 'dueSoon', 'reported', 'watching']);
  const ids = (k: keyof Lists) => (res.body[k] as Summary[]).map((t) => t.id);
  return { assigned: ids('assigned'), reported: ids('reported'), watching: ids('watching'), dueSoon: ids('dueSoon') };
}

function caller(key: string, opts: Partial<Caller> = {}): Caller {
  const p = people[key]!;
  return { me: p.id, role: p.role, triage: true, projectIds: null, timezoneToday: day(0), ...opts };
}

describe('GET /my: each list for each role', () => {
  it.each(['owner', 'admin', 'member', 'elevated', 'client'])('%s (delegated token)', async (key) => {
    const token = (await makeToken(app.db.sql, ws, people[key]!)).token;
    const got = await my(token);
    const want = expected(caller(key));
    expect(got).toEqual(want);
    // every list is exercised for every role
    expect(want.reported.length).toBeGreaterThan(0);
    expect(want.watching.length).toBeGreaterThan(0);
    expect(want.assigned.length).toBeGreaterThan(0);
    expect(want.dueSoon.length).toBeGreaterThan(0);
  });

  it('agent token: assigned and reported are the agent\u2019s own', async () => {
    const agent = people.agent!;
    const token = (await makeToken(app.db.sql, ws, agent, { kind: 'agent', createdBy: people.owner!.id })).token;
    const got = await my(token);
    expect(got).toEqual(expected(caller('agent')));
    // open ones: todo, in progress, in review (p1), todo (p2, visible as assignee), triage (Inbox)
    expect(got.assigned.length).toBe(5);
    const ownerView = expected(caller('owner'));
    expect(got.assigned.some((id) => ownerView.assigned.includes(id))).toBe(false);
  });

  it('a client user\u2019s lists hold only what they can see', async () => {
    const elevated = await my((await makeToken(app.db.sql, ws, people.elevated!)).token);
    // assigned on p2 (not their client's project, not reported or viewed): invisible, so not listed
    const hidden = tickets.find((t) => t.assigneeId === people.elevated!.id && t.projectId === p2.id)!;
    expect(elevated.assigned).not.toContain(hidden.id);
    const client = await my((await makeToken(app.db.sql, ws, people.client!)).token);
    const all = [...client.assigned, ...client.reported, ...client.watching, ...client.dueSoon];
    for (const id of all) {
      const t = tickets.find((x) => x.id === id)!;
      expect(t.reporterId === people.client!.id || t.assigneeId === people.client!.id || t.viewers.includes(people.client!.id)).toBe(true);
    }
    // nothing of their client's project unless they take part in it (unlike the elevated client user)
    const p1Unrelated = tickets.filter((t) => t.projectId === p1.id && !t.archived && t.reporterId === null && t.assigneeId === null && t.viewers.length === 0);
    expect(p1Unrelated.length).toBeGreaterThan(0);
    for (const t of p1Unrelated) expect(all).not.toContain(t.id);
    expect(elevated.dueSoon.some((id) => p1Unrelated.some((t) => t.id === id))).toBe(true);
  });

  it('a session sees the same lists as a token of the same person', async () => {
    const session = await login(app, people.member!.email, people.member!.password);
    const res = await app.call('GET', `/api/w/${ws.slug}/my`, { session });
    expect(res.status).toBe(200);
    expect(Object.fromEntries(Object.entries(res.body).map(([k, v]) => [k, (v as Summary[]).map((t) => t.id)]))).toEqual(expected(caller('member')));
  });

  it('a project-restricted token keeps to its projects; a token without triage leaves out the Inbox', async () => {
    const restricted = (await makeToken(app.db.sql, ws, people.owner!, { projectIds: [p2.id] })).token;
    expect(await my(restricted)).toEqual(expected(caller('owner', { projectIds: [p2.id] })));
    const noTriage = (await makeToken(app.db.sql, ws, people.member!, { scopes: ['read'] })).token;
    const got = await my(noTriage);
    expect(got).toEqual(expected(caller('member', { triage: false })));
    expect(got.assigned.length).toBe(expected(caller('member')).assigned.length - 1);
  });
});

describe('GET /my: orders, caps, windows', () => {
  it('every list is capped at 50', async () => {
    const got = await my((await makeToken(app.db.sql, ws, people.busy!)).token);
    const want = expected(caller('busy'));
    expect(got).toEqual(want);
    for (const list of Object.values(got)) expect(list).toHaveLength(50);
  });

  it('assigned: priority, then due date (none last), then activity', async () => {
    const res = await app.call('GET', `/api/w/${ws.slug}/my`, { token: (await makeToken(app.db.sql, ws, people.busy!)).token });
    const assigned = res.body.assigned as { id: string; priority: { position: number }; dueDate: string | null; state: { category: string } }[];
    expect(assigned).toHaveLength(50);
    expect(assigned.map((t) => t.id)).toEqual(expected(caller('busy')).assigned);
    for (let i = 1; i < assigned.length; i++) {
      const [a, b] = [assigned[i - 1]!, assigned[i]!];
      expect(a.priority.position <= b.priority.position).toBe(true);
      if (a.priority.position === b.priority.position && a.dueDate !== null && b.dueDate !== null) expect(a.dueDate <= b.dueDate).toBe(true);
      if (a.priority.position === b.priority.position && a.dueDate === null) expect(b.dueDate).toBeNull();
    }
    expect(assigned.every((t) => t.state.category === 'open')).toBe(true);
  });

  it('dueSoon: open, overdue or due up to 6 days after today, earliest first then priority; archived and closed left out', async () => {
    const token = (await makeToken(app.db.sql, ws, people.owner!)).token;
    const res = await app.call('GET', `/api/w/${ws.slug}/my`, { token });
    const due = res.body.dueSoon as { id: string; dueDate: string; priority: { position: number }; state: { category: string } }[];
    expect(due.length).toBe(50);
    expect(due.map((t) => t.id)).toEqual(expected(caller('owner')).dueSoon);
    expect(due[0]!.dueDate).toBe(day(-30));
    expect(due[0]!.priority.position).toBe(0);
    expect(due.every((t) => t.state.category === 'open' && t.dueDate <= day(6))).toBe(true);
    for (let i = 1; i < due.length; i++) expect(due[i - 1]!.dueDate <= due[i]!.dueDate).toBe(true);
  });

  it("dueSoon counts days in the caller's timezone", async () => {
    // restricted to p2, whose due-soon tickets fit in one list
    const island = await my((await makeToken(app.db.sql, ws, people.islander!, { projectIds: [p2.id] })).token);
    const utc = await my((await makeToken(app.db.sql, ws, people.owner!, { projectIds: [p2.id] })).token);
    expect(island.dueSoon).toEqual(expected(caller('islander', { timezoneToday: day(1), projectIds: [p2.id] })).dueSoon);
    expect(utc.dueSoon).toEqual(expected(caller('owner', { projectIds: [p2.id] })).dueSoon);
    // due 7 UTC days ahead: within the window in Kiritimati (already 11 March there), not yet in UTC
    const plus7 = tickets.find((t) => t.due === day(7) && t.projectId === p2.id)!;
    expect(island.dueSoon).toContain(plus7.id);
    expect(utc.dueSoon).not.toContain(plus7.id);
    expect(island.dueSoon.length).toBeLessThan(50);
  });

  it('reported and watching: most recent activity first; archived left out', async () => {
    const token = (await makeToken(app.db.sql, ws, people.member!)).token;
    const res = await app.call('GET', `/api/w/${ws.slug}/my`, { token });
    for (const list of ['reported', 'watching'] as const) {
      const xs = res.body[list] as { id: string; updatedAt: string }[];
      expect(xs.length).toBeGreaterThan(0);
      for (let i = 1; i < xs.length; i++) expect(xs[i - 1]!.updatedAt >= xs[i]!.updatedAt).toBe(true);
      for (const t of xs) expect(tickets.find((f) => f.id === t.id)!.archived).toBe(false);
    }
  });
});

describe('GET /my: one statement', () => {
  it('reads all four lists in one SQL statement', async () => {
    const statements: string[] = [];
    const counting: Db = connect(app.db.url, { max: 1, debug: (_c, q) => statements.push(q) });
    try {
      await counting`select 1`;
      await cachedPlanPool(counting)!`select 1`; // the sibling pool's first connection reads the types
      const { token } = await makeToken(app.db.sql, ws, people.member!);
      const principal = await app.verifier.verify(token, ws.slug, new Date());
      statements.length = 0;
      const res = await runOp(getMyWork, { sql: counting, principal, now: () => NOW }, {});
      // one statement reads the lists, nothing around it
      expect(statements.map((q) => q.trim().split(/\s+/)[0])).toEqual(['select']);
      expect(res.assigned.map((t) => t.id)).toEqual(expected(caller('member')).assigned);
    } finally {
      await counting.end();
    }
  });

  it('carries its page sizes as literals and runs on its cached plan, planned once per connection', async () => {
    // `limit $n` made a generic plan assume a tenth of the rows; and even with literal limits,
    // PostgreSQL's own choice kept planning the statement afresh on every call (10 ms at 100,000
    // tickets, as long as running it) whenever the custom plans came out cheaper, which the
    // statistics of one large workspace decide: the operation asks for the cached plan itself
    await app.db.sql`analyze`;
    for (const [who, limit] of [
      ['busy', undefined],
      ['member', 7],
      ['client', undefined],
    ] as const) {
      // a connection of its own each: its prepared statements and their plan counts start empty
      const statements: string[] = [];
      const counting: Db = connect(app.db.url, { max: 1, debug: (_c, query) => statements.push(query) });
      try {
        const { token } = await makeToken(app.db.sql, ws, people[who]!);
        const principal = await app.verifier.verify(token, ws.slug, new Date());
        const ctx = { sql: counting, principal, now: () => NOW };
        await counting`select 1`; // the connection's own first statements (types)
        await cachedPlanPool(counting)!`select 1`; // and its sibling's, on which the statement runs (db/connect.ts onCachedPlan)
        statements.length = 0;
        const res = await runOp(getMyWork, ctx, limit ? { limit } : {});
        const want = expected(caller(who));
        for (const list of ['assigned', 'reported', 'watching', 'dueSoon'] as const)
          expect(res[list].map((t) => t.id)).toEqual(want[list].slice(0, limit ?? 50));
        // one statement, one round trip: no transaction around it to set the plan mode
        expect(statements.map((q) => q.trim().split(/\s+/).slice(0, 3).join(' '))).toEqual(['select x.assigned::json as']);
        const query = statements[0]!;
        expect(query).not.toMatch(/limit \$\d/);
        expect(query.match(/limit (\d+)/g)).toEqual(Array(4).fill(`limit ${limit ?? 50}`));
        for (let i = 0; i < 7; i++) await runOp(getMyWork, ctx, limit ? { limit } : {});
        const [plans] = await cachedPlanPool(counting)!<[{ generic: number; custom: number }]>`
          select generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements where statement = ${query}`;
        expect({ who, ...plans }).toEqual({ who, generic: 8, custom: 0 });
        const [mode] = await counting<[{ plan_cache_mode: string }]>`show plan_cache_mode`;
        expect(mode.plan_cache_mode).toBe('auto');
      } finally {
        await counting.end();
      }
    }
  });
});

describe('GET /my: access', () => {
  it('unknown parameters are ignored', async () => {
    const token = (await makeToken(app.db.sql, ws, people.member!)).token;
    const res = await app.call('GET', `/api/w/${ws.slug}/my?limit=1&assigneeId=nobody`, { token });
    expect(res.status).toBe(200);
    expect(res.body.assigned.map((t: Summary) => t.id)).toEqual(expected(caller('member')).assigned);
  });

  it('403 missing_scope without read; 401 without a credential', async () => {
    const writeOnly = (await makeToken(app.db.sql, ws, people.member!, { scopes: ['write'] })).token;
    const res = await app.call('GET', `/api/w/${ws.slug}/my`, { token: writeOnly });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'missing_scope', scope: 'read' } });
    expect((await app.call('GET', `/api/w/${ws.slug}/my`)).status).toBe(401);
  });
});
