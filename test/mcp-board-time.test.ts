import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  addViewers,
  billEntry,
  makeCategory,
  makePeriod,
  makeProject,
  makeTicket,
  makeTimeEntry,
  makeToken,
  makeUser,
  makeWorkspace,
  workflowIds,
  type Person,
  type WorkflowIds,
  type Workspace,
} from './helpers/factories.ts';
import { mcpSession, type McpSession } from './helpers/mcp.ts';

const NOW = new Date('2030-03-10T12:00:00.000Z');
const TODAY = '2030-03-10';

let app: TestApp;
let ws: Workspace;
let wf: WorkflowIds;
let owner: Person;
let member: Person;
let other: Person;
let web: { id: string; key: string };
let token: string;
let s: McpSession;
const T: Record<string, { id: string; humanId: string }> = {};

beforeAll(async () => {
  app = await startTestApp({ now: () => NOW });
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  wf = await workflowIds(sql, ws);
  owner = await makeUser(sql, ws, { role: 'owner' });
  member = await makeUser(sql, ws, { name: 'Mia Member' });
  other = await makeUser(sql, ws);
  web = await makeProject(sql, ws, { members: [{ person: member }, { person: other }] });
  let n = 0;
  const at = () => new Date(NOW.getTime() - 3_600_000 + n++ * 1000);
  for (let i = 0; i < 12; i++) {
    T[`todo${i}`] = await makeTicket(sql, ws, { projectId: web.id, title: `Todo ${i}`, priorityKey: i === 0 ? 'urgent' : 'normal', updatedAt: at() });
  }
  T.mine = await makeTicket(sql, ws, {
    projectId: web.id,
    title: 'Mine',
    stateKey: 'in_progress',
    assigneeId: member.id,
    dueDate: '2030-03-12',
    updatedAt: at(),
  });
  T.reported = await makeTicket(sql, ws, { projectId: web.id, title: 'Reported', reporterId: member.id, stateKey: 'done', updatedAt: at() });
  T.watched = await makeTicket(sql, ws, { projectId: web.id, title: 'Watched', updatedAt: at() });
  await addViewers(sql, T.watched!.id, [member.id]);
  token = (await makeToken(sql, ws, member)).token;
  s = await mcpSession(app, token);
});
afterAll(async () => {
  await s.close();
  await app.close();
});

const rest = (path: string) => app.call('GET', `/api/w/${ws.slug}${path}`, { token });

describe('board tools', () => {
  it('get_board: every state in order, totals, 10 compact tickets per column by default, board order', async () => {
    const out = await s.ok('get_board', {});
    const board = (await rest('/board')).body;
    expect(out.columns.map((c: any) => c.state)).toEqual(board.columns.map((c: any) => c.state.name));
    const todo = out.columns.find((c: any) => c.stateId === wf.states.todo);
    expect(todo.total).toBe(13);
    expect(todo.tickets).toHaveLength(10);
    expect(todo.tickets[0]).toMatchObject({ humanId: T.todo0!.humanId, priority: 'Urgent' });
    expect(todo.tickets.map((t: any) => t.id)).toEqual(
      board.columns
        .find((c: any) => c.state.id === wf.states.todo)
        .tickets.slice(0, 10)
        .map((t: any) => t.id),
    );
    expect(todo.nextCursor).toEqual(expect.any(String));
    const text = (await s.call('get_board', {})).content as any;
    expect(text[0].text).toContain('## Todo (13)');
  });

  it('get_board filters by name; get_board_column continues a column with the REST cursor', async () => {
    const filtered = await s.ok('get_board', { assignee: 'me', states: ['In progress'] });
    expect(filtered.columns.find((c: any) => c.state === 'In progress').tickets.map((t: any) => t.id)).toEqual([T.mine!.id]);
    expect(filtered.columns.find((c: any) => c.state === 'Todo').total).toBe(0);

    const first = (await s.ok('get_board', { limit: 5 })).columns.find((c: any) => c.state === 'Todo');
    const next = await s.ok('get_board_column', { state: 'todo', cursor: first.nextCursor, limit: 5 });
    const viaRest = (await rest(`/board/${wf.states.todo}?limit=5&cursor=${first.nextCursor}`)).body;
    expect(next.items.map((t: any) => t.id)).toEqual(viaRest.items.map((t: any) => t.id));
    expect(next.items).toHaveLength(5);
    const last = await s.ok('get_board_column', { state: 'Todo', cursor: next.nextCursor });
    expect([...first.tickets, ...next.items, ...last.items].map((t: any) => t.id).sort()).toEqual(
      Object.keys(T)
        .filter((k) => k.startsWith('todo') || k === 'watched')
        .map((k) => T[k]!.id)
        .sort(),
    );
    expect(last.nextCursor).toBeNull();
  });

  it("board errors: another column's cursor, unknown state, bad limit", async () => {
    const first = (await s.ok('get_board', { limit: 1 })).columns.find((c: any) => c.state === 'Todo');
    expect(await s.fail('get_board_column', { state: 'done', cursor: first.nextCursor })).toMatchObject({ code: 'invalid', reason: 'bad_cursor' });
    expect(await s.fail('get_board_column', { state: 'Shipped' })).toMatchObject({ code: 'invalid', reason: 'unknown_state', details: { field: 'state' } });
    expect(await s.fail('get_board_column', { state: '00000000-0000-4000-8000-000000000000' })).toMatchObject({ code: 'not_found', reason: 'unknown_state' });
    expect(await s.fail('get_board', { limit: 51 })).toMatchObject({ code: 'invalid', details: { field: 'limit' } });
  });

  it('get_my_work: the four lists, compact', async () => {
    const out = await s.ok('get_my_work', {});
    const my = (await rest('/my')).body;
    for (const list of ['assigned', 'reported', 'watching', 'dueSoon']) {
      expect(
        out[list].map((t: any) => t.id),
        list,
      ).toEqual(my[list].map((t: any) => t.id));
    }
    expect(out.assigned.map((t: any) => t.title)).toEqual(['Mine']);
    expect(out.watching.map((t: any) => t.title)).toEqual(['Watched']);
    expect((await s.ok('get_my_work', { limit: 1 })).dueSoon.length).toBeLessThanOrEqual(1);
  });
});

describe('time tools', () => {
  it('log_time on a ticket by human id; get_time_entries lists it with the total', async () => {
    const out = await s.ok('log_time', { ticket: T.mine!.humanId, spentOn: TODAY, minutes: 90, startedAt: '09:30', note: 'pairing' });
    const week = await s.ok('get_time_entries', { from: '2030-03-09', to: '2030-03-15' });
    expect(week).toMatchObject({ userId: member.id, timezone: 'UTC', totalMinutes: 90 });
    expect(week.entries).toEqual([
      {
        id: out.id,
        ticketRef: T.mine!.humanId,
        title: 'Mine',
        spentOn: TODAY,
        startedAt: '09:30:00',
        minutes: 90,
        billable: true,
        billed: false,
        note: 'pairing',
        correctsEntryId: null,
        closed: false,
      },
    ]);
    const rest = await app.call('GET', `/api/w/${ws.slug}/time?from=2030-03-09&to=2030-03-15`, { token });
    expect(rest.body.entries.map((e: any) => e.id)).toEqual([out.id]);
    const page = await app.call('GET', `/api/w/${ws.slug}/tickets/${T.mine!.id}`, { token });
    expect(page.body.events.map((e: any) => e.kind)).toContain('time_logged');
    expect((await s.ok('get_time_entries', { from: '2030-03-01', to: '2030-03-31', ticket: T.watched!.humanId })).entries).toEqual([]);
  });

  it('update_time_entry changes your entry; the REST reasons otherwise', async () => {
    const { id } = await s.ok('log_time', { ticket: T.mine!.id, spentOn: TODAY, minutes: 30 });
    expect(await s.ok('update_time_entry', { entryId: id, minutes: 45, billable: false })).toEqual({ id });
    const week = await s.ok('get_time_entries', { from: TODAY, to: TODAY });
    expect(week.entries.find((e: any) => e.id === id)).toMatchObject({ minutes: 45, billable: false });
    expect(await s.fail('update_time_entry', { entryId: id, minutes: -5 })).toMatchObject({ code: 'invalid', reason: 'negative_minutes' });
    expect(await s.fail('update_time_entry', { entryId: 'abc' })).toMatchObject({ code: 'invalid', reason: 'bad_uuid' });
    expect(await s.fail('update_time_entry', { entryId: '00000000-0000-4000-8000-000000000000', minutes: 5 })).toMatchObject({ code: 'not_found' });
    const theirs = await makeTimeEntry(app.db.sql, ws, { ticketId: T.mine!.id, userId: other.id, spentOn: TODAY });
    expect(await s.fail('update_time_entry', { entryId: theirs.id, minutes: 5 })).toMatchObject({ code: 'forbidden', reason: 'not_entry_author' });
    await billEntry(app.db.sql, ws, id);
    expect(await s.fail('update_time_entry', { entryId: id, minutes: 50 })).toMatchObject({ code: 'conflict', reason: 'entry_billed' });
  });

  it('log_time and get_time_entries errors', async () => {
    const inbox = await makeTicket(app.db.sql, ws, { projectId: null });
    expect(await s.fail('log_time', { ticket: inbox.humanId, spentOn: TODAY, minutes: 10 })).toMatchObject({ code: 'invalid', reason: 'ticket_unrouted' });
    expect(await s.fail('log_time', { ticket: T.mine!.id, spentOn: TODAY, minutes: 0 })).toMatchObject({ code: 'invalid', details: { field: 'minutes' } });
    expect(await s.fail('log_time', { ticket: T.mine!.id, spentOn: '2030-02-30', minutes: 10 })).toMatchObject({
      code: 'invalid',
      details: { field: 'spentOn' },
    });
    expect(await s.fail('log_time', { ticket: 'WEB-424242', spentOn: TODAY, minutes: 10 })).toMatchObject({ code: 'not_found', details: { field: 'ticket' } });
    await makePeriod(app.db.sql, ws, { start: '2029-01-01', end: '2029-01-31', closed: true });
    expect(await s.fail('log_time', { ticket: T.mine!.id, spentOn: '2029-01-15', minutes: 10 })).toMatchObject({
      code: 'conflict',
      reason: 'closed_period_log',
    });
    expect(await s.fail('get_time_entries', { from: '2030-03-10', to: '2030-03-01' })).toMatchObject({ code: 'invalid', reason: 'range_limit' });
    expect(await s.fail('get_time_entries', { from: '2029-01-01', to: '2030-03-01' })).toMatchObject({ reason: 'range_limit' });
    expect(await s.fail('get_time_entries', { from: TODAY, to: TODAY, user: other.email })).toMatchObject({ code: 'forbidden', reason: 'admin_only' });
    const admin = await mcpSession(app, (await makeToken(app.db.sql, ws, owner)).token);
    expect((await admin.ok('get_time_entries', { from: TODAY, to: TODAY, user: other.email })).userId).toBe(other.id);
    expect(await admin.fail('get_time_entries', { from: TODAY, to: TODAY, user: 'ghost@example.test' })).toMatchObject({ reason: 'unknown_person' });
    await admin.close();
  });

  it('list_categories', async () => {
    const cat = await makeCategory(app.db.sql, ws, 'Senior developer');
    expect((await s.ok('list_categories', {})).categories).toEqual([{ id: cat.id, name: 'Senior developer' }]);
  });
});

describe('workflow and changes', () => {
  it('get_workflow and list_changes answer like their REST twins', async () => {
    const workflow = await s.ok('get_workflow', {});
    expect(workflow).toEqual((await rest('/workflow')).body);
    const changes = await s.ok('list_changes', { after: 0, limit: 500 });
    expect(changes).toEqual((await rest('/changes?after=0&limit=500')).body);
    expect(changes.changes.map((c: any) => c.kind)).toContain('time_logged');
  });
});
