import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import {
  addLabels,
  makeClient,
  makeProject,
  makeTicket,
  makeToken,
  makeUser,
  makeWorkspace,
  workflowIds,
  type Person,
  type WorkflowIds,
  type Workspace,
} from './helpers/factories.ts';

/**
 * Administration of the workflow's lists (issue 22): POST, PUT and DELETE ?moveTo= for states,
 * kinds, priorities and labels; the one-of flags (default state, customer-resolve state, inbound
 * kind, default priority); deleting an item in use (409 in_use, or the tickets move with an event
 * each); GET /workflow right after a change; Owner/Admin from a session or an `admin` token only.
 */

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

interface World {
  ws: Workspace;
  owner: Person;
  session: SessionCookie;
  wf: WorkflowIds;
  projectId: string;
  call: (method: string, path: string, body?: unknown, auth?: { session?: SessionCookie; token?: string }) => ReturnType<TestApp['call']>;
}

/** A workspace of its own (the default workflow), its Owner's session and a project. */
async function world(): Promise<World> {
  const sql = app.db.sql;
  const ws = await makeWorkspace(sql);
  const owner = await makeUser(sql, ws, { role: 'owner' });
  const session = await login(app, owner.email, owner.password);
  const project = await makeProject(sql, ws);
  const call: World['call'] = (method, path, body, auth = { session }) => app.call(method, `/api/w/${ws.slug}${path}`, { ...auth, body });
  return { ws, owner, session, wf: await workflowIds(sql, ws), projectId: project.id, call };
}

const reasonOf = (res: { body: any }) => res.body?.error?.details?.reason;
function expectRefusal(res: { status: number; body: any }, status: number, reason: string): void {
  expect({ status: res.status, reason: reasonOf(res) }, JSON.stringify(res.body)).toEqual({ status, reason });
}

async function workflowOf(w: World): Promise<any> {
  const res = await w.call('GET', '/workflow');
  expect(res.status).toBe(200);
  return res.body;
}

async function ticketRow(id: string) {
  const [row] = await app.db.sql<{ stateId: string; kindId: string; priorityId: string; closedAt: Date | null; priorityPosition: number }[]>`
    select state_id as "stateId", kind_id as "kindId", priority_id as "priorityId", closed_at as "closedAt", priority_position as "priorityPosition"
    from tickets where id = ${id}`;
  return row!;
}

async function eventsOf(ticketId: string) {
  return app.db.sql<{ kind: string; actorId: string; payload: any }[]>`
    select kind, actor_id as "actorId", payload from ticket_events where ticket_id = ${ticketId} order by created_at, id`;
}

describe('workflow states', () => {
  let w: World;
  beforeAll(async () => {
    w = await world();
  });

  it('POST adds a state last; GET /workflow shows it at once (the cache is dropped); audited with its door', async () => {
    await workflowOf(w); // cached now
    const res = await w.call('POST', '/workflow/states', { key: 'blocked', name: ' Blocked ', category: 'open' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      key: 'blocked',
      name: 'Blocked',
      category: 'open',
      position: 6,
      isDefault: false,
      isCustomerResolve: false,
    });
    const states = (await workflowOf(w)).states;
    expect(states.map((s: any) => s.key)).toEqual(['triage', 'todo', 'in_progress', 'in_review', 'done', 'cancelled', 'blocked']);
    const [audit] = await app.db.sql`select target, outcome, door from ops_audit where workspace_id = ${w.ws.id} and action = 'workflow.states.create'`;
    expect(audit).toEqual({ target: 'blocked', outcome: 'succeeded', door: 'rest' });
  });

  it('a position reorders the list and renumbers it 0, 1, 2, ...', async () => {
    const res = await w.call('POST', '/workflow/states', { key: 'backlog', name: 'Backlog', category: 'open', position: 0 });
    expect(res.body.position).toBe(0);
    const moved = await w.call('PUT', `/workflow/states/${w.wf.states.done}`, { position: 1 });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ key: 'done', position: 1 });
    const states = (await workflowOf(w)).states;
    expect(states.map((s: any) => [s.key, s.position])).toEqual([
      ['backlog', 0],
      ['done', 1],
      ['triage', 2],
      ['todo', 3],
      ['in_progress', 4],
      ['in_review', 5],
      ['cancelled', 6],
      ['blocked', 7],
    ]);
    // past the end is the end
    expect((await w.call('PUT', `/workflow/states/${res.body.id}`, { position: 1000 })).body.position).toBe(7);
  });

  it('PUT renames and re-keys; a key another state has is 409 key_taken; a malformed key is 400', async () => {
    const res = await w.call('PUT', `/workflow/states/${w.wf.states.in_review}`, { name: 'Review', key: 'review' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: w.wf.states.in_review, key: 'review', name: 'Review', category: 'open' });
    expectRefusal(await w.call('PUT', `/workflow/states/${w.wf.states.in_review}`, { key: 'todo' }), 409, 'key_taken');
    expectRefusal(await w.call('POST', '/workflow/states', { key: 'todo', name: 'Again', category: 'open' }), 409, 'key_taken');
    expectRefusal(await w.call('POST', '/workflow/states', { key: 'Not A Key', name: 'X', category: 'open' }), 400, 'validation');
    expectRefusal(await w.call('POST', '/workflow/states', { key: 'nocategory', name: 'X' }), 400, 'validation');
  });

  it('exactly one default: making a state the default moves the flag; unsetting it or deleting it is 409 default_required', async () => {
    const res = await w.call('PUT', `/workflow/states/${w.wf.states.triage}`, { isDefault: true });
    expect(res.body.isDefault).toBe(true);
    const states = (await workflowOf(w)).states;
    expect(states.filter((s: any) => s.isDefault).map((s: any) => s.key)).toEqual(['triage']);
    expectRefusal(await w.call('PUT', `/workflow/states/${w.wf.states.triage}`, { isDefault: false }), 409, 'default_required');
    expectRefusal(await w.call('DELETE', `/workflow/states/${w.wf.states.triage}?moveTo=${w.wf.states.todo}`), 409, 'default_required');
    // false on a state that is not the default changes nothing
    expect((await w.call('PUT', `/workflow/states/${w.wf.states.todo}`, { isDefault: false })).status).toBe(200);
    // a new default straight away
    const created = await w.call('POST', '/workflow/states', { key: 'inbox_new', name: 'New', category: 'open', isDefault: true });
    expect(created.body.isDefault).toBe(true);
    expect((await workflowOf(w)).states.filter((s: any) => s.isDefault).map((s: any) => s.key)).toEqual(['inbox_new']);
    await w.call('PUT', `/workflow/states/${w.wf.states.todo}`, { isDefault: true });
  });

  it('exactly one customer-resolve state: it moves, it is never unset or deleted (409 resolve_required)', async () => {
    const res = await w.call('PUT', `/workflow/states/${w.wf.states.cancelled}`, { isCustomerResolve: true });
    expect(res.body.isCustomerResolve).toBe(true);
    expect((await workflowOf(w)).states.filter((s: any) => s.isCustomerResolve).map((s: any) => s.key)).toEqual(['cancelled']);
    expectRefusal(await w.call('PUT', `/workflow/states/${w.wf.states.cancelled}`, { isCustomerResolve: false }), 409, 'resolve_required');
    expectRefusal(await w.call('DELETE', `/workflow/states/${w.wf.states.cancelled}?moveTo=${w.wf.states.done}`), 409, 'resolve_required');
    await w.call('PUT', `/workflow/states/${w.wf.states.done}`, { isCustomerResolve: true });
  });

  it('a closed state cannot become the default, nor the default closed (409 default_closed)', async () => {
    expectRefusal(await w.call('PUT', `/workflow/states/${w.wf.states.done}`, { isDefault: true }), 409, 'default_closed');
    expectRefusal(await w.call('POST', '/workflow/states', { key: 'shipped', name: 'Shipped', category: 'closed', isDefault: true }), 409, 'default_closed');
    const empty = await w.call('POST', '/workflow/states', { key: 'parked', name: 'Parked', category: 'open' });
    expectRefusal(await w.call('PUT', `/workflow/states/${empty.body.id}`, { category: 'closed', isDefault: true }), 409, 'default_closed');
    // the default itself (todo) holds no ticket here, so only the default rule refuses it
    expectRefusal(await w.call('PUT', `/workflow/states/${w.wf.states.todo}`, { category: 'closed' }), 409, 'default_closed');
    expect((await workflowOf(w)).states.find((s: any) => s.key === 'todo')).toMatchObject({ isDefault: true, category: 'open' });
    const [row] = await app.db.sql`select count(*)::int as n from workflow_states where workspace_id = ${w.ws.id} and key = 'shipped'`;
    expect(row!.n).toBe(0);
  });

  it('a category changes only while no ticket is in the state (409 in_use)', async () => {
    const s = await w.call('POST', '/workflow/states', { key: 'waiting', name: 'Waiting', category: 'open' });
    expect((await w.call('PUT', `/workflow/states/${s.body.id}`, { category: 'closed' })).body.category).toBe('closed');
    await makeTicket(app.db.sql, w.ws, { projectId: w.projectId, stateKey: 'waiting' });
    const res = await w.call('PUT', `/workflow/states/${s.body.id}`, { category: 'open' });
    expectRefusal(res, 409, 'in_use');
    expect(res.body.error.details.tickets).toBe(1);
    // the same category is no change
    expect((await w.call('PUT', `/workflow/states/${s.body.id}`, { category: 'closed', name: 'Waiting on them' })).status).toBe(200);
  });

  it('DELETE of a state in use without moveTo is 409 in_use; with it, the tickets move and each gets an event', async () => {
    const sql = app.db.sql;
    const s = await w.call('POST', '/workflow/states', { key: 'doomed', name: 'Doomed', category: 'open' });
    const a = await makeTicket(sql, w.ws, { projectId: w.projectId, stateKey: 'doomed' });
    const b = await makeTicket(sql, w.ws, { projectId: w.projectId, stateKey: 'doomed', archived: true });
    const other = await makeTicket(sql, w.ws, { projectId: w.projectId, stateKey: 'in_progress' });
    const refused = await w.call('DELETE', `/workflow/states/${s.body.id}`);
    expectRefusal(refused, 409, 'in_use');
    expect(refused.body.error.details.tickets).toBe(2);
    expect((await ticketRow(a.id)).stateId).toBe(s.body.id);

    const res = await w.call('DELETE', `/workflow/states/${s.body.id}?moveTo=${w.wf.states.done}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, moved: 2 });
    for (const t of [a, b]) {
      const row = await ticketRow(t.id);
      expect(row.stateId).toBe(w.wf.states.done);
      // open -> closed: closedAt is set, as a PATCH sets it
      expect(row.closedAt).not.toBeNull();
      expect(await eventsOf(t.id)).toEqual([
        { kind: 'field_changed', actorId: w.owner.id, payload: { field: 'stateId', old: s.body.id, new: w.wf.states.done } },
      ]);
    }
    expect(await eventsOf(other.id)).toEqual([]);
    expect((await workflowOf(w)).states.map((x: any) => x.key)).not.toContain('doomed');
    const [counts] = await sql`select count(*)::int as n from board_counts where state_id = ${s.body.id}`;
    expect(counts!.n).toBe(0);
    // the change feed carries the moves
    const [changes] = await sql`select count(*)::int as n from ticket_changes where ticket_id = ${a.id}`;
    expect(changes!.n).toBeGreaterThan(0);
    const [audit] =
      await sql`select target, detail, outcome from ops_audit where workspace_id = ${w.ws.id} and action = 'workflow.states.delete' and outcome = 'succeeded'`;
    expect(audit).toEqual({ target: s.body.id, detail: `2 ticket(s) moved to ${w.wf.states.done}`, outcome: 'succeeded' });
  });

  it('DELETE of a state nobody uses needs no target; the board still has a column per state', async () => {
    const s = await w.call('POST', '/workflow/states', { key: 'unused', name: 'Unused', category: 'open' });
    expect((await w.call('DELETE', `/workflow/states/${s.body.id}`)).body).toEqual({ ok: true, moved: 0 });
    const board = await w.call('GET', '/board');
    expect(board.status).toBe(200);
    expect(board.body.columns.map((c: any) => c.state.key)).toEqual((await workflowOf(w)).states.map((x: any) => x.key));
  });

  it('the target: unknown (404 unknown_target), the state itself (400 same_target), malformed (400 bad_uuid), another list’s id (404)', async () => {
    const s = await w.call('POST', '/workflow/states', { key: 'target_probe', name: 'Probe', category: 'open' });
    await makeTicket(app.db.sql, w.ws, { projectId: w.projectId, stateKey: 'target_probe' });
    expectRefusal(await w.call('DELETE', `/workflow/states/${s.body.id}?moveTo=${randomUUID()}`), 404, 'unknown_target');
    expectRefusal(await w.call('DELETE', `/workflow/states/${s.body.id}?moveTo=${w.wf.kinds.bug}`), 404, 'unknown_target');
    expectRefusal(await w.call('DELETE', `/workflow/states/${s.body.id}?moveTo=${s.body.id}`), 400, 'same_target');
    const bad = await w.call('DELETE', `/workflow/states/${s.body.id}?moveTo=nope`);
    expectRefusal(bad, 400, 'bad_uuid');
    expect(bad.body.error.details.field).toBe('moveTo');
    // nothing moved, nothing deleted
    expect((await workflowOf(w)).states.map((x: any) => x.key)).toContain('target_probe');
  });

  it('an unknown or malformed id: 404 unknown_state, 400 bad_uuid; another workspace’s state is unknown', async () => {
    expectRefusal(await w.call('PUT', `/workflow/states/${randomUUID()}`, { name: 'X' }), 404, 'unknown_state');
    expectRefusal(await w.call('DELETE', `/workflow/states/${randomUUID()}`), 404, 'unknown_state');
    expectRefusal(await w.call('PUT', '/workflow/states/nope', { name: 'X' }), 400, 'bad_uuid');
    const elsewhere = await workflowIds(app.db.sql, await makeWorkspace(app.db.sql));
    expectRefusal(await w.call('PUT', `/workflow/states/${elsewhere.states.todo}`, { name: 'Mine now' }), 404, 'unknown_state');
    expectRefusal(await w.call('DELETE', `/workflow/states/${elsewhere.states.triage}`), 404, 'unknown_state');
    const s = await w.call('POST', '/workflow/states', { key: 'cross', name: 'Cross', category: 'open' });
    await makeTicket(app.db.sql, w.ws, { projectId: w.projectId, stateKey: 'cross' });
    expectRefusal(await w.call('DELETE', `/workflow/states/${s.body.id}?moveTo=${elsewhere.states.todo}`), 404, 'unknown_target');
  });
});

describe('concurrent changes to one list', () => {
  it('one writer at a time: racing defaults leave exactly one, racing inserts at position 0 leave positions 0..n-1', async () => {
    const w = await world();
    const keys = ['triage', 'in_progress', 'in_review', 'todo'] as const;
    const defaults = await Promise.all(keys.map((k) => w.call('PUT', `/workflow/states/${w.wf.states[k]}`, { isDefault: true })));
    expect(defaults.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const inserts = await Promise.all(
      Array.from({ length: 5 }, (_, i) => w.call('POST', '/workflow/states', { key: `racer_${i}`, name: `Racer ${i}`, category: 'open', position: 0 })),
    );
    expect(inserts.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    const states = (await workflowOf(w)).states;
    expect(states.filter((s: any) => s.isDefault)).toHaveLength(1);
    expect(states.map((s: any) => s.position)).toEqual(states.map((_: unknown, i: number) => i));
  });
});

describe('ticket kinds', () => {
  let w: World;
  beforeAll(async () => {
    w = await world();
  });

  it('create, rename, reorder; exactly one inbound kind (409 inbound_required)', async () => {
    const res = await w.call('POST', '/workflow/kinds', { key: 'question', name: 'Question', position: 1 });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(String), key: 'question', name: 'Question', position: 1, isInbound: false });
    expect((await workflowOf(w)).kinds.map((k: any) => k.key)).toEqual(['request', 'question', 'bug', 'feature', 'task']);
    expect((await w.call('PUT', `/workflow/kinds/${res.body.id}`, { name: 'Questions', isInbound: true })).body).toMatchObject({
      name: 'Questions',
      isInbound: true,
    });
    expect((await workflowOf(w)).kinds.filter((k: any) => k.isInbound).map((k: any) => k.key)).toEqual(['question']);
    expectRefusal(await w.call('PUT', `/workflow/kinds/${res.body.id}`, { isInbound: false }), 409, 'inbound_required');
    expectRefusal(await w.call('DELETE', `/workflow/kinds/${res.body.id}?moveTo=${w.wf.kinds.bug}`), 409, 'inbound_required');
    expectRefusal(await w.call('POST', '/workflow/kinds', { key: 'bug', name: 'Bug again' }), 409, 'key_taken');
    expectRefusal(await w.call('PUT', `/workflow/kinds/${randomUUID()}`, { name: 'X' }), 404, 'unknown_kind');
  });

  it('DELETE in use: 409 in_use without moveTo; with it, the tickets take the target kind with an event each', async () => {
    const sql = app.db.sql;
    const t = await makeTicket(sql, w.ws, { projectId: w.projectId, kindKey: 'feature' });
    expectRefusal(await w.call('DELETE', `/workflow/kinds/${w.wf.kinds.feature}`), 409, 'in_use');
    expectRefusal(await w.call('DELETE', `/workflow/kinds/${w.wf.kinds.feature}?moveTo=${w.wf.states.todo}`), 404, 'unknown_target');
    const res = await w.call('DELETE', `/workflow/kinds/${w.wf.kinds.feature}?moveTo=${w.wf.kinds.task}`);
    expect(res.body).toEqual({ ok: true, moved: 1 });
    expect((await ticketRow(t.id)).kindId).toBe(w.wf.kinds.task);
    expect(await eventsOf(t.id)).toEqual([
      { kind: 'field_changed', actorId: w.owner.id, payload: { field: 'kindId', old: w.wf.kinds.feature, new: w.wf.kinds.task } },
    ]);
    expect((await workflowOf(w)).kinds.map((k: any) => k.key)).not.toContain('feature');
  });
});

describe('priorities', () => {
  let w: World;
  beforeAll(async () => {
    w = await world();
  });

  it('a reorder moves the tickets’ board order with it; exactly one default (409 default_required)', async () => {
    const sql = app.db.sql;
    const t = await makeTicket(sql, w.ws, { projectId: w.projectId, priorityKey: 'low' });
    expect((await ticketRow(t.id)).priorityPosition).toBe(3);
    const res = await w.call('PUT', `/workflow/priorities/${w.wf.priorities.low}`, { position: 0, name: 'Lowest' });
    expect(res.body).toMatchObject({ key: 'low', name: 'Lowest', position: 0, isDefault: false });
    expect((await ticketRow(t.id)).priorityPosition).toBe(0);
    expect((await workflowOf(w)).priorities.map((p: any) => [p.key, p.position])).toEqual([
      ['low', 0],
      ['urgent', 1],
      ['high', 2],
      ['normal', 3],
    ]);
    expectRefusal(await w.call('PUT', `/workflow/priorities/${w.wf.priorities.normal}`, { isDefault: false }), 409, 'default_required');
    expectRefusal(await w.call('DELETE', `/workflow/priorities/${w.wf.priorities.normal}?moveTo=${w.wf.priorities.high}`), 409, 'default_required');
    const created = await w.call('POST', '/workflow/priorities', { key: 'someday', name: 'Someday', isDefault: true });
    expect(created.status).toBe(201);
    expect((await workflowOf(w)).priorities.filter((p: any) => p.isDefault).map((p: any) => p.key)).toEqual(['someday']);
  });

  it('DELETE in use: 409 in_use without moveTo; with it, the tickets move, take the target’s board order, and get an event each', async () => {
    const t = await makeTicket(app.db.sql, w.ws, { projectId: w.projectId, priorityKey: 'high' });
    expectRefusal(await w.call('DELETE', `/workflow/priorities/${w.wf.priorities.high}`), 409, 'in_use');
    const res = await w.call('DELETE', `/workflow/priorities/${w.wf.priorities.high}?moveTo=${w.wf.priorities.urgent}`);
    expect(res.body).toEqual({ ok: true, moved: 1 });
    const row = await ticketRow(t.id);
    expect(row).toMatchObject({ priorityId: w.wf.priorities.urgent, priorityPosition: 1 });
    expect(await eventsOf(t.id)).toEqual([
      { kind: 'field_changed', actorId: w.owner.id, payload: { field: 'priorityId', old: w.wf.priorities.high, new: w.wf.priorities.urgent } },
    ]);
  });
});

describe('labels', () => {
  let w: World;
  beforeAll(async () => {
    w = await world();
  });

  it('create, rename, recolour; a name another label has in any case is 409 name_taken', async () => {
    const res = await w.call('POST', '/workflow/labels', { name: 'Urgent fix', color: '#ff0000' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(String), name: 'Urgent fix', color: '#ff0000' });
    expectRefusal(await w.call('POST', '/workflow/labels', { name: 'FRONTEND' }), 409, 'name_taken');
    expectRefusal(await w.call('PUT', `/workflow/labels/${res.body.id}`, { name: 'Backend' }), 409, 'name_taken');
    expect((await w.call('PUT', `/workflow/labels/${res.body.id}`, { name: 'URGENT FIX' })).body).toEqual({
      id: res.body.id,
      name: 'URGENT FIX',
      color: '#ff0000',
    });
    expect((await w.call('PUT', `/workflow/labels/${res.body.id}`, { color: null })).body.color).toBeNull();
    expectRefusal(await w.call('POST', '/workflow/labels', { name: 'x', color: 'red' }), 400, 'validation');
    expectRefusal(await w.call('PUT', `/workflow/labels/${randomUUID()}`, { name: 'X' }), 404, 'unknown_label');
    expect((await workflowOf(w)).labels.map((l: any) => l.name)).toContain('URGENT FIX');
  });

  it('DELETE in use: 409 in_use without moveTo; with it, each ticket carries the target in its place, once, with an event', async () => {
    const sql = app.db.sql;
    const onlyDesign = await makeTicket(sql, w.ws, { projectId: w.projectId });
    await addLabels(sql, w.ws, onlyDesign.id, ['design']);
    const both = await makeTicket(sql, w.ws, { projectId: w.projectId });
    await addLabels(sql, w.ws, both.id, ['design', 'frontend', 'billing']);
    const refused = await w.call('DELETE', `/workflow/labels/${w.wf.labels.design}`);
    expectRefusal(refused, 409, 'in_use');
    expect(refused.body.error.details.tickets).toBe(2);
    expectRefusal(await w.call('DELETE', `/workflow/labels/${w.wf.labels.design}?moveTo=${randomUUID()}`), 404, 'unknown_target');
    expectRefusal(await w.call('DELETE', `/workflow/labels/${w.wf.labels.design}?moveTo=${w.wf.labels.design}`), 400, 'same_target');

    const res = await w.call('DELETE', `/workflow/labels/${w.wf.labels.design}?moveTo=${w.wf.labels.frontend}`);
    expect(res.body).toEqual({ ok: true, moved: 2 });
    const labelsOf = async (id: string) =>
      (await sql<{ id: string }[]>`select label_id as id from ticket_labels where ticket_id = ${id}`).map((r) => r.id).sort();
    expect(await labelsOf(onlyDesign.id)).toEqual([w.wf.labels.frontend]);
    expect(await labelsOf(both.id)).toEqual([w.wf.labels.frontend, w.wf.labels.billing!].sort());
    expect(await eventsOf(onlyDesign.id)).toEqual([
      { kind: 'field_changed', actorId: w.owner.id, payload: { field: 'labelIds', old: [w.wf.labels.design], new: [w.wf.labels.frontend] } },
    ]);
    expect(await eventsOf(both.id)).toEqual([
      {
        kind: 'field_changed',
        actorId: w.owner.id,
        payload: {
          field: 'labelIds',
          old: [w.wf.labels.design, w.wf.labels.frontend, w.wf.labels.billing].sort(),
          new: [w.wf.labels.frontend, w.wf.labels.billing].sort(),
        },
      },
    ]);
    expect((await workflowOf(w)).labels.map((l: any) => l.name)).not.toContain('design');
    // a label nobody carries goes without a target
    expect((await w.call('DELETE', `/workflow/labels/${w.wf.labels.infrastructure}`)).body).toEqual({ ok: true, moved: 0 });
  });
});

describe('who may administer the workflow', () => {
  let w: World;
  let member: Person;
  let memberSession: SessionCookie;
  let clientSession: SessionCookie;
  let adminSession: SessionCookie;
  beforeAll(async () => {
    w = await world();
    const sql = app.db.sql;
    member = await makeUser(sql, w.ws, { role: 'member' });
    memberSession = await login(app, member.email, member.password);
    const client = await makeClient(sql, w.ws);
    const clientUser = await makeUser(sql, w.ws, { role: 'client_elevated', clientId: client.id });
    clientSession = await login(app, clientUser.email, clientUser.password);
    const admin = await makeUser(sql, w.ws, { role: 'admin' });
    adminSession = await login(app, admin.email, admin.password);
  });

  const writes = (w: World) =>
    [
      ['POST', '/workflow/states', { key: 'authz_s', name: 'S', category: 'open' }],
      ['PUT', `/workflow/states/${w.wf.states.triage}`, { name: 'Triage' }],
      ['DELETE', `/workflow/states/${w.wf.states.in_review}`, undefined],
      ['POST', '/workflow/kinds', { key: 'authz_k', name: 'K' }],
      ['PUT', `/workflow/kinds/${w.wf.kinds.bug}`, { name: 'Bug' }],
      ['DELETE', `/workflow/kinds/${w.wf.kinds.task}`, undefined],
      ['POST', '/workflow/priorities', { key: 'authz_p', name: 'P' }],
      ['PUT', `/workflow/priorities/${w.wf.priorities.high}`, { name: 'High' }],
      ['DELETE', `/workflow/priorities/${w.wf.priorities.low}`, undefined],
      ['POST', '/workflow/labels', { name: 'authz label' }],
      ['PUT', `/workflow/labels/${w.wf.labels.backend}`, { name: 'backend' }],
      ['DELETE', `/workflow/labels/${w.wf.labels.customer}`, undefined],
    ] as const;

  it('a member and a client user (sessions) are 403 admin_only; nothing changes; the refusals are audited', async () => {
    const before = await workflowOf(w);
    for (const [method, path, body] of writes(w)) {
      expectRefusal(await w.call(method, path, body, { session: memberSession }), 403, 'admin_only');
      expect((await w.call(method, path, body, { session: clientSession })).status).toBe(403);
    }
    expect(await workflowOf(w)).toEqual(before);
    const [audit] = await app.db.sql`
      select count(*)::int as n from ops_audit where workspace_id = ${w.ws.id} and action like 'workflow.%' and outcome = 'refused' and actor_id = ${member.id}`;
    expect(audit!.n).toBe(12);
  });

  it('a token without the admin scope is 403 missing_scope, an admin-scope token of a member 403 admin_only', async () => {
    const sql = app.db.sql;
    const writeToken = (await makeToken(sql, w.ws, w.owner, { scopes: ['read', 'write', 'triage'] })).token;
    const memberAdmin = (await makeToken(sql, w.ws, member, { scopes: ['read', 'write', 'admin'] })).token;
    for (const [method, path, body] of writes(w)) {
      expectRefusal(await w.call(method, path, body, { token: writeToken }), 403, 'missing_scope');
      expectRefusal(await w.call(method, path, body, { token: memberAdmin }), 403, 'admin_only');
    }
  });

  it('an Owner’s admin-scope token and an Admin’s session may; the audit names the door', async () => {
    const sql = app.db.sql;
    const ownerAdmin = (await makeToken(sql, w.ws, w.owner, { scopes: ['admin'] })).token;
    const byToken = await w.call('POST', '/workflow/labels', { name: 'from a script' }, { token: ownerAdmin });
    expect(byToken.status).toBe(201);
    const bySession = await w.call('POST', '/workflow/kinds', { key: 'from_admin', name: 'From admin' }, { session: adminSession });
    expect(bySession.status).toBe(201);
    const rows = await sql`select action, door, outcome from ops_audit where workspace_id = ${w.ws.id} and outcome = 'succeeded' order by at, id`;
    expect(rows).toEqual([
      { action: 'workflow.labels.create', door: 'rest', outcome: 'succeeded' },
      { action: 'workflow.kinds.create', door: 'rest', outcome: 'succeeded' },
    ]);
  });
});
