import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getBoard } from '../src/core/board/board.ts';
import { runOp } from '../src/core/operation.ts';
import { cachedPlanPool, connect, type Db } from '../src/db/connect.ts';
import { BANK, boardSort, boardWorld, CLOSED, NOW, STATE_ORDER, type BoardWorld, type Fixture } from './board-world.ts';

let w: BoardWorld;

beforeAll(async () => {
  w = await boardWorld();
});
afterAll(() => w.app.close());

interface Column {
  state: { id: string; key: string; name: string; category: string };
  total: number;
  tickets: { id: string; state: { key: string }; priority: { position: number }; updatedAt: string }[];
  nextCursor: string | null;
}

async function board(query = '', token = w.ownerToken): Promise<Column[]> {
  const res = await w.app.call('GET', `/api/w/${w.ws.slug}/board${query ? `?${query}` : ''}`, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.columns;
}

/** Every visible, non-archived ticket GET /tickets lists for the query (all pages). */
async function listAll(query: string, token = w.ownerToken): Promise<{ id: string; state: { key: string } }[]> {
  const out: { id: string; state: { key: string } }[] = [];
  let cursor: string | null = null;
  do {
    const res = await w.app.call('GET', `/api/w/${w.ws.slug}/tickets?${query}&limit=50${cursor ? `&cursor=${cursor}` : ''}`, { token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    out.push(...res.body.items);
    cursor = res.body.nextCursor;
  } while (cursor);
  return out;
}

const today = NOW.toISOString().slice(0, 10);
const plusDays = (d: number) => new Date(NOW.getTime() + d * 86_400_000).toISOString().slice(0, 10);

/** The expected board of the owner for `keep`, straight from the fixture. */
function expectBoard(columns: Column[], keep: (t: Fixture) => boolean) {
  expect(columns.map((c) => c.state.key)).toEqual(STATE_ORDER);
  for (const c of columns) {
    const want = w.tickets
      .filter((t) => !t.archived && t.state === c.state.key && keep(t))
      .sort(boardSort)
      .map((t) => t.id);
    expect(c.total, c.state.key).toBe(want.length);
    expect(
      c.tickets.map((t) => t.id),
      c.state.key,
    ).toEqual(want.slice(0, 50));
  }
}

describe('GET /board: columns, order, shape', () => {
  it('one column per state in workflow order, with state {id,key,name,category}, total, tickets and nextCursor', async () => {
    const columns = await board();
    expect(columns.map((c) => c.state.key)).toEqual(STATE_ORDER);
    for (const c of columns) {
      expect(Object.keys(c).sort()).toEqual(['nextCursor', 'state', 'tickets', 'total']);
      expect(c.state).toEqual({
        id: w.wf.states[c.state.key],
        key: c.state.key,
        name: expect.any(String),
        category: CLOSED.has(c.state.key) ? 'closed' : 'open',
      });
      expect(c.nextCursor).toBeNull();
    }
    expect(columns.find((c) => c.state.key === 'blocked')!.state.name).toBe('Blocked');
    expectBoard(columns, () => true);
  });

  it('tickets are TicketSummaries of their column, in board order (priority position, then newest activity)', async () => {
    const columns = await board();
    const todo = columns.find((c) => c.state.key === 'todo')!;
    expect(todo.tickets.length).toBeGreaterThan(2);
    for (const t of todo.tickets) expect(t.state.key).toBe('todo');
    for (let i = 1; i < todo.tickets.length; i++) {
      const [a, b] = [todo.tickets[i - 1]!, todo.tickets[i]!];
      expect(a.priority.position < b.priority.position || (a.priority.position === b.priority.position && a.updatedAt >= b.updatedAt)).toBe(true);
    }
    const one = todo.tickets[0]!;
    const listed = (await listAll('')).find((t) => t.id === one.id);
    expect(one).toEqual(listed);
  });

  it('archived tickets are never on a board, archived=true is not a board filter', async () => {
    const archived = w.tickets.filter((t) => t.archived).map((t) => t.id);
    expect(archived.length).toBeGreaterThan(1);
    for (const q of ['', 'archived=true', `projectId=${w.p1.id}`]) {
      const onBoard = (await board(q)).flatMap((c) => c.tickets.map((t) => t.id));
      for (const id of archived) expect(onBoard).not.toContain(id);
    }
    expect(await board('archived=true')).toEqual(await board());
  });

  it('limit caps every column; nextCursor is set exactly when the column has more', async () => {
    const full = await board();
    const columns = await board('limit=2');
    for (const [i, c] of columns.entries()) {
      expect(c.total).toBe(full[i]!.total);
      expect(c.tickets.map((t) => t.id)).toEqual(full[i]!.tickets.slice(0, 2).map((t) => t.id));
      expect(c.nextCursor === null).toBe(c.total <= 2);
    }
    expect(columns.some((c) => c.nextCursor !== null)).toBe(true);
    const one = await board('limit=1');
    expect(one.every((c) => c.tickets.length === Math.min(1, c.total))).toBe(true);
  });

  it('cursor and unknown parameters are ignored', async () => {
    expect(await board('cursor=whatever&frobnicate=1')).toEqual(await board());
  });

  it('reads the whole board in one SQL statement', async () => {
    const statements: string[] = [];
    const counting: Db = connect(w.app.db.url, { max: 1, debug: (_c, q) => statements.push(q) });
    try {
      await counting`select 1`;
      await cachedPlanPool(counting)!`select 1`; // the sibling pool's first connection reads the types (the board runs there: db/connect.ts onCachedPlan)
      statements.length = 0;
      const principal = await w.app.verifier.verify(w.ownerToken, w.ws.slug, new Date());
      const res = await runOp(getBoard, { sql: counting, principal, now: () => NOW }, { kindIds: w.wf.kinds.bug });
      expect(res.columns).toHaveLength(STATE_ORDER.length);
      // one statement checks the filter's ids, one reads the board
      expect(statements).toHaveLength(2);
      statements.length = 0;
      await runOp(getBoard, { sql: counting, principal, now: () => NOW }, { stateCategory: 'open', q: 'alpha' });
      expect(statements).toHaveLength(1);
    } finally {
      await counting.end();
    }
  });
});

describe('GET /board: filters (totals and first pages under every filter)', () => {
  const me = () => w.owner.id;
  const isOpen = (t: Fixture) => !CLOSED.has(t.state);
  const filters: [string, () => string, (t: Fixture) => boolean][] = [
    ['projectId', () => `projectId=${w.p1.id}`, (t) => t.projectId === w.p1.id],
    ['queue=inbox', () => 'queue=inbox', (t) => t.projectId === null],
    ['stateIds', () => `stateIds=${w.wf.states.todo},${w.wf.states.done}`, (t) => ['todo', 'done'].includes(t.state)],
    ['kindIds', () => `kindIds=${w.wf.kinds.bug}`, (t) => t.kind === 'bug'],
    ['labelIds', () => `labelIds=${w.wf.labels.frontend},${w.wf.labels.design}`, (t) => t.labels.includes('frontend') || t.labels.includes('design')],
    ['priorityIds', () => `priorityIds=${w.wf.priorities.urgent},${w.wf.priorities.low}`, (t) => ['urgent', 'low'].includes(t.priority)],
    ['stateCategory=open', () => 'stateCategory=open', isOpen],
    ['stateCategory=closed', () => 'stateCategory=closed', (t) => !isOpen(t)],
    ['assigneeId=me', () => 'assigneeId=me', (t) => t.assigneeId === me()],
    ['assigneeId=none', () => 'assigneeId=none', (t) => t.assigneeId === null],
    ['assigneeId=<uuid>', () => `assigneeId=${w.member.id}`, (t) => t.assigneeId === w.member.id],
    ['reporterId=me', () => 'reporterId=me', (t) => t.reporterId === me()],
    ['reporterId=none', () => 'reporterId=none', (t) => t.reporterId === null],
    ['reporterId=<uuid>', () => `reporterId=${w.clientUser.id}`, (t) => t.reporterId === w.clientUser.id],
    ['viewerId=<uuid>', () => `viewerId=${w.member.id}`, (t) => t.reporterId === w.member.id || t.viewers.includes(w.member.id)],
    ['viewerId=me', () => 'viewerId=me', (t) => t.reporterId === me() || t.viewers.includes(me())],
    ['viewerId=none', () => 'viewerId=none', (t) => t.reporterId === null && t.viewers.length === 0],
    ['billingClientId=<uuid>', () => `billingClientId=${w.clientA.id}`, (t) => t.billingClientId === w.clientA.id],
    ['billingClientId=none', () => 'billingClientId=none', (t) => t.billingClientId === null],
    // effective policy: ticket, else project, else the project's client (p2's client is free), else paid
    ['billingPolicy=free', () => 'billingPolicy=free', (t) => !t.bank && t.projectId === w.p2.id],
    ['billingPolicy=paid', () => 'billingPolicy=paid', (t) => !t.bank && t.projectId !== w.p2.id],
    ['billingPolicy=bank', () => `billingPolicy=bank:${BANK}`, (t) => t.bank],
    ['due=overdue', () => 'due=overdue', (t) => t.due !== null && t.due < today && isOpen(t)],
    ['due=week', () => 'due=week', (t) => t.due !== null && t.due >= today && t.due <= plusDays(6)],
    ['due=none', () => 'due=none', (t) => t.due === null],
    ['q (words)', () => 'q=alpha', (t) => t.title.startsWith('Alpha')],
    ['q (human id)', () => `q=${w.tickets[4]!.humanId}`, (t) => t.id === w.tickets[4]!.id],
    ['combined', () => `projectId=${w.p2.id}&stateCategory=open&assigneeId=none`, (t) => t.projectId === w.p2.id && isOpen(t) && t.assigneeId === null],
  ];

  it.each(filters)('%s', async (_name, query, keep) => {
    const columns = await board(query());
    expectBoard(columns, keep);
    const sum = columns.reduce((n, c) => n + c.total, 0);
    // every filter selects something and leaves something out
    expect(sum).toBeGreaterThan(0);
    expect(sum).toBeLessThan(w.tickets.filter((t) => !t.archived).length);
    // and agrees with GET /tickets under the same filter, state by state
    const listed = await listAll(query());
    for (const c of columns) expect(c.total, c.state.key).toBe(listed.filter((t) => t.state.key === c.state.key).length);
  });

  it('a state the filters exclude keeps its column, empty with total 0 (stateIds, stateCategory)', async () => {
    const columns = await board(`stateIds=${w.wf.states.todo}`);
    expect(columns.map((c) => c.state.key)).toEqual(STATE_ORDER);
    for (const c of columns.filter((c) => c.state.key !== 'todo')) expect(c).toMatchObject({ total: 0, tickets: [], nextCursor: null });
    expect(columns.find((c) => c.state.key === 'todo')!.total).toBeGreaterThan(0);
    const closed = await board('stateCategory=closed');
    expect(closed.map((c) => c.state.key)).toEqual(STATE_ORDER);
    for (const c of closed) {
      if (CLOSED.has(c.state.key)) expect(c.total).toBeGreaterThan(0);
      else expect(c).toMatchObject({ total: 0, tickets: [], nextCursor: null });
    }
  });
});

describe('GET /board: visibility and access', () => {
  it('a client user sees only the tickets they reported, are assigned to or view', async () => {
    const token = await w.token(w.clientUser);
    const me = w.clientUser.id;
    const columns = await board('', token);
    expect(columns.map((c) => c.state.key)).toEqual(STATE_ORDER);
    for (const c of columns) {
      const want = w.tickets.filter((t) => !t.archived && t.state === c.state.key && (t.reporterId === me || t.assigneeId === me || t.viewers.includes(me)));
      expect(c.total, c.state.key).toBe(want.length);
      expect(c.tickets.map((t) => t.id).sort()).toEqual(want.map((t) => t.id).sort());
    }
    expect(columns.reduce((n, c) => n + c.total, 0)).toBeGreaterThan(0);
    // filters apply inside what they can see
    const viewing = await board('viewerId=me', token);
    expect(viewing.reduce((n, c) => n + c.total, 0)).toBe(w.tickets.filter((t) => !t.archived && (t.reporterId === me || t.viewers.includes(me))).length);
  });

  it('a member sees their projects, the Inbox, and tickets they take part in', async () => {
    const token = await w.token(w.member);
    const me = w.member.id;
    const columns = await board('', token);
    const visible = (t: Fixture) => t.projectId === null || t.projectId === w.p1.id || t.reporterId === me || t.assigneeId === me || t.viewers.includes(me);
    for (const c of columns) expect(c.total, c.state.key).toBe(w.tickets.filter((t) => !t.archived && t.state === c.state.key && visible(t)).length);
  });

  it('a project-restricted token sees only its projects; a token without triage never sees the Inbox', async () => {
    const restricted = await w.token(w.owner, { projectIds: [w.p2.id] });
    expectBoardTotals(await board('', restricted), (t) => t.projectId === w.p2.id);
    const noTriage = await w.token(w.owner, { scopes: ['read'] });
    expectBoardTotals(await board('', noTriage), (t) => t.projectId !== null);
  });

  it('403 for queue=inbox without triage, on a restricted token, or for a client user', async () => {
    const cases: [string, string][] = [
      [await w.token(w.owner, { scopes: ['read'] }), 'missing_scope'],
      [await w.token(w.owner, { projectIds: [w.p1.id] }), 'project_not_allowed'],
      [await w.token(w.clientUser), 'inbox_forbidden'],
    ];
    for (const [token, reason] of cases) {
      const res = await w.app.call('GET', `/api/w/${w.ws.slug}/board?queue=inbox`, { token });
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'forbidden', details: { reason } });
    }
  });

  it('403 for a projectId outside the allow-list, and for a billing filter from a client user', async () => {
    const restricted = await w.token(w.owner, { projectIds: [w.p1.id] });
    const r1 = await w.app.call('GET', `/api/w/${w.ws.slug}/board?projectId=${w.p2.id}`, { token: restricted });
    expect(r1.status).toBe(403);
    expect(r1.body.error.details).toMatchObject({ reason: 'project_not_allowed', projectId: w.p2.id });
    const r2 = await w.app.call('GET', `/api/w/${w.ws.slug}/board?billingPolicy=paid`, { token: await w.token(w.clientUser) });
    expect(r2.status).toBe(403);
    expect(r2.body.error.details).toMatchObject({ reason: 'billing_fields_forbidden', field: 'billingPolicy' });
  });

  it('403 missing_scope without read; 401 without a credential', async () => {
    const writeOnly = await w.token(w.owner, { scopes: ['write'] });
    const res = await w.app.call('GET', `/api/w/${w.ws.slug}/board`, { token: writeOnly });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'missing_scope', scope: 'read' } });
    expect((await w.app.call('GET', `/api/w/${w.ws.slug}/board`)).status).toBe(401);
  });
});

function expectBoardTotals(columns: Column[], keep: (t: Fixture) => boolean) {
  for (const c of columns) expect(c.total, c.state.key).toBe(w.tickets.filter((t) => !t.archived && t.state === c.state.key && keep(t)).length);
  expect(columns.reduce((n, c) => n + c.total, 0)).toBeGreaterThan(0);
}

describe('GET /board: bad query values', () => {
  const uuids = (n: number) => Array.from({ length: n }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`).join(',');
  const cases: [string, string][] = [
    ['limit=0', 'limit'],
    ['limit=', 'limit'],
    ['limit=51', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['limit=-1', 'limit'],
    ['projectId=nope', 'projectId'],
    ['queue=review', 'queue'],
    ['stateIds=abc', 'stateIds'],
    [`kindIds=${uuids(21)}`, 'kindIds'],
    ['stateCategory=pending', 'stateCategory'],
    ['assigneeId=someone', 'assigneeId'],
    ['billingPolicy=expensive', 'billingPolicy'],
    ['due=soon', 'due'],
    [`q=${'x'.repeat(201)}`, 'q'],
    ['due=week&due=none', 'due'],
  ];
  it.each(cases.map(([q, f]) => [q.length > 60 ? `${q.slice(0, 40)}...` : q, q, f]))('400 invalid for %s', async (_label, query, field) => {
    const res = await w.app.call('GET', `/api/w/${w.ws.slug}/board?${query}`, { token: w.ownerToken });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 'invalid',
      details: { reason: 'validation', field: expect.stringMatching(new RegExp(`^${field}(\\.\\d+)?$`)) },
    });
  });

  it('400 unknown_* for ids that name nothing in the workspace', async () => {
    const nobody = '11111111-2222-4333-8444-555555555555';
    const cases: [string, string][] = [
      [`stateIds=${nobody}`, 'unknown_state'],
      [`priorityIds=${nobody}`, 'unknown_priority'],
      [`projectId=${nobody}`, 'unknown_project'],
      [`assigneeId=${nobody}`, 'unknown_person'],
    ];
    for (const [query, reason] of cases) {
      const res = await w.app.call('GET', `/api/w/${w.ws.slug}/board?${query}`, { token: w.ownerToken });
      expect(res.status, query).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid', details: { reason } });
    }
  });
});
