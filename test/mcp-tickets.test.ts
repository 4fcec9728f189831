import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  addLabels,
  makeClient,
  makeComment,
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
import { mcpSession, type McpSession } from './helpers/mcp.ts';

let app: TestApp;
let ws: Workspace;
let wf: WorkflowIds;
let owner: Person;
let member: Person;
let outsider: Person;
let clientUser: Person;
let web: { id: string; key: string };
let api: { id: string; key: string };
let hidden: { id: string; key: string };
let memberToken: string;
let s: McpSession;
const T: Record<string, { id: string; humanId: string }> = {};

const COMPACT_KEYS = ['assignee', 'dueDate', 'humanId', 'id', 'priority', 'state', 'title', 'updatedAt'];

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  wf = await workflowIds(sql, ws);
  owner = await makeUser(sql, ws, { role: 'owner', name: 'Olga Owner' });
  member = await makeUser(sql, ws, { role: 'member', name: 'Mia Member' });
  outsider = await makeUser(sql, ws, { role: 'member', name: 'Same Name' });
  await makeUser(sql, ws, { role: 'member', name: 'Same Name' });
  const client = await makeClient(sql, ws);
  clientUser = await makeUser(sql, ws, { role: 'client_elevated', clientId: client.id });
  web = await makeProject(sql, ws, { billingClientId: client.id, members: [{ person: member }] });
  api = await makeProject(sql, ws, { members: [{ person: member }] });
  hidden = await makeProject(sql, ws, { members: [{ person: outsider }] });
  memberToken = (await makeToken(sql, ws, member)).token;
  const base = Date.now() - 3_600_000;
  let minute = 0;
  const at = () => new Date(base + minute++ * 1000);
  T.bug = await makeTicket(sql, ws, {
    projectId: web.id,
    title: 'Login button broken',
    kindKey: 'bug',
    priorityKey: 'high',
    assigneeId: member.id,
    updatedAt: at(),
  });
  T.progress = await makeTicket(sql, ws, { projectId: web.id, title: 'Checkout redesign', stateKey: 'in_progress', updatedAt: at() });
  T.api = await makeTicket(sql, ws, { projectId: api.id, title: 'Rate limits', dueDate: '2020-01-01', updatedAt: at() });
  T.hidden = await makeTicket(sql, ws, { projectId: hidden.id, title: 'Secret project work', updatedAt: at() });
  T.inbox = await makeTicket(sql, ws, { projectId: null, title: 'Unrouted request', updatedAt: at() });
  await addLabels(sql, ws, T.bug!.id, ['frontend']);
  s = await mcpSession(app, memberToken);
});
afterAll(async () => {
  await s.close();
  await app.close();
});

const rest = (path: string, token = memberToken) => app.call('GET', `/api/w/${ws.slug}${path}`, { token });

describe('search_tickets', () => {
  it('returns compact summaries in the REST order, with names instead of objects', async () => {
    const out = await s.ok('search_tickets', {});
    const page = await rest('/tickets');
    expect(out.items.map((t: any) => t.id)).toEqual(page.body.items.map((t: any) => t.id));
    expect(out.items.map((t: any) => t.humanId)).not.toContain(T.hidden!.humanId);
    const bug = out.items.find((t: any) => t.id === T.bug!.id);
    expect(Object.keys(bug).sort()).toEqual(COMPACT_KEYS);
    expect(bug).toMatchObject({ humanId: T.bug!.humanId, state: 'Todo', priority: 'High', assignee: 'Mia Member', dueDate: null });
    expect(out.nextCursor).toBeNull();
  });

  it('filters by names, keys, emails and human ids, like GET /tickets with ids', async () => {
    const byNames = await s.ok('search_tickets', { states: ['todo'], priorities: ['High'], labels: ['Frontend'], assignee: member.email, project: web.key });
    expect(byNames.items.map((t: any) => t.id)).toEqual([T.bug!.id]);
    const byIds = await rest(`/tickets?stateIds=${wf.states.todo}&priorityIds=${wf.priorities.high}&assigneeId=${member.id}&projectId=${web.id}`);
    expect(byIds.body.items.map((t: any) => t.id)).toEqual([T.bug!.id]);
    expect((await s.ok('search_tickets', { query: T.progress!.humanId })).items.map((t: any) => t.id)).toEqual([T.progress!.id]);
    expect((await s.ok('search_tickets', { assignee: 'me' })).items.map((t: any) => t.id)).toEqual([T.bug!.id]);
    expect((await s.ok('search_tickets', { due: 'overdue' })).items.map((t: any) => t.id)).toEqual([T.api!.id]);
    expect((await s.ok('search_tickets', { queue: 'inbox' })).items.map((t: any) => t.id)).toEqual([T.inbox!.id]);
  });

  it('pages with the same limit and cursor as REST: the cursors are interchangeable', async () => {
    const first = await s.ok('search_tickets', { limit: 2 });
    expect(first.items).toHaveLength(2);
    const viaRest = await rest(`/tickets?limit=2&cursor=${first.nextCursor}`);
    const viaMcp = await s.ok('search_tickets', { limit: 2, cursor: first.nextCursor });
    expect(viaMcp.items.map((t: any) => t.id)).toEqual(viaRest.body.items.map((t: any) => t.id));
    expect(viaMcp.nextCursor).toEqual(viaRest.body.nextCursor);
  });

  it('the text content is one line per ticket (with where to continue)', async () => {
    const r = await s.call('search_tickets', { limit: 2 });
    const lines = (r.content as any)[0].text.split('\n');
    expect(lines[0]).toContain(r.structuredContent.items[0].humanId);
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe(`More: cursor=${r.structuredContent.nextCursor}`);
  });

  it('bad arguments are invalid results with the REST reasons', async () => {
    for (const limit of [0, 51, 1.5]) {
      expect(await s.fail('search_tickets', { limit })).toMatchObject({ code: 'invalid', reason: 'validation', details: { field: 'limit' } });
    }
    expect(await s.fail('search_tickets', { cursor: 'not-a-cursor' })).toMatchObject({ code: 'invalid', reason: 'bad_cursor', details: { field: 'cursor' } });
    expect(await s.fail('search_tickets', { query: 'x'.repeat(201) })).toMatchObject({ code: 'invalid', details: { field: 'query' } });
    expect(await s.fail('search_tickets', { stateCategory: 'maybe' })).toMatchObject({ code: 'invalid', reason: 'validation' });
    expect(await s.fail('search_tickets', { billingPolicy: 'cheap' })).toMatchObject({ code: 'invalid', details: { field: 'billingPolicy' } });
  });

  it('an unknown name lists the valid choices', async () => {
    const e = await s.fail('search_tickets', { states: ['todo', 'Limbo'] });
    expect(e).toMatchObject({ code: 'invalid', reason: 'unknown_state', details: { field: 'states.1', value: 'Limbo' } });
    expect(e.details.choices.map((c: any) => c.key)).toEqual(['triage', 'todo', 'in_progress', 'in_review', 'done', 'cancelled']);
    expect((await s.fail('search_tickets', { labels: ['nope'] })).details.choices.map((c: any) => c.name)).toContain('frontend');
    expect(await s.fail('search_tickets', { kinds: ['epic'] })).toMatchObject({ reason: 'unknown_kind' });
    expect(await s.fail('search_tickets', { priorities: ['whenever'] })).toMatchObject({ reason: 'unknown_priority' });
    const person = await s.fail('search_tickets', { assignee: 'nobody@example.test' });
    expect(person).toMatchObject({ code: 'invalid', reason: 'unknown_person', details: { field: 'assignee' } });
    expect(person.details.choices.map((c: any) => c.email)).toContain(member.email);
    expect(await s.fail('search_tickets', { reporter: 'Same Name' })).toMatchObject({ reason: 'ambiguous_person' });
    const project = await s.fail('search_tickets', { project: 'NOPE' });
    expect(project).toMatchObject({ reason: 'unknown_project', details: { field: 'project' } });
    expect(project.details.choices.map((c: any) => c.key)).toContain(web.key);
    expect(await s.fail('search_tickets', { billingClient: 'Nobody Inc' })).toMatchObject({ reason: 'unknown_client' });
  });

  it('an id that names nothing answers as REST does, with the argument named', async () => {
    const e = await s.fail('search_tickets', { states: ['00000000-0000-4000-8000-000000000000'] });
    expect(e).toMatchObject({ code: 'invalid', reason: 'unknown_state', details: { field: 'stateIds', argument: 'states' } });
  });
});

describe('get_ticket', () => {
  it('by human id: names, links and permissions; no events; the latest comments trimmed', async () => {
    const sql = app.db.sql;
    const t = await makeTicket(sql, ws, { projectId: web.id, title: 'Talkative', assigneeId: member.id });
    for (let i = 1; i <= 5; i++) {
      await makeComment(sql, ws, {
        ticketId: t.id,
        body: `${i}: ${'word '.repeat(i === 5 ? 200 : 2)}`,
        authorId: owner.id,
        createdAt: new Date(Date.now() - (10 - i) * 1000),
      });
    }
    const out = await s.ok('get_ticket', { ticket: t.humanId.toLowerCase() });
    expect(out).toMatchObject({
      id: t.id,
      humanId: t.humanId,
      state: 'Todo',
      stateCategory: 'open',
      kind: 'Request',
      project: web.key,
      assignee: 'Mia Member',
    });
    expect(out.events).toBeUndefined();
    expect(out.commentCount).toBe(5);
    expect(out.commentsOmitted).toBe(2);
    expect(out.comments.map((c: any) => c.body.slice(0, 2))).toEqual(['3:', '4:', '5:']);
    expect(out.comments[2].body.length).toBe(501);
    expect(out.comments[2].body.endsWith('…')).toBe(true);
    expect(out.permissions).toMatchObject({ edit: true });
    expect(out.billing).toBeDefined();

    const full = await s.ok('get_ticket', { ticket: t.id, include: ['comments', 'events'] });
    expect(full.comments).toHaveLength(5);
    expect(full.commentsOmitted).toBe(0);
    expect(full.comments[4].body.length).toBeGreaterThan(900);
    expect(full.events.map((e: any) => e.kind)).toEqual([]);
  });

  it('unknown, invisible and over-long references are the REST errors', async () => {
    expect(await s.fail('get_ticket', { ticket: 'WEB-99999' })).toMatchObject({ code: 'not_found' });
    expect(await s.fail('get_ticket', { ticket: T.hidden!.humanId })).toMatchObject({ code: 'not_found' });
    expect(await s.fail('get_ticket', { ticket: T.hidden!.id })).toMatchObject({ code: 'not_found' });
    expect(await s.fail('get_ticket', { ticket: 'X'.repeat(61) })).toMatchObject({ code: 'invalid', reason: 'ref_too_long', details: { argument: 'ticket' } });
    expect(await s.fail('get_ticket', { ticket: T.bug!.id, include: ['history'] })).toMatchObject({ code: 'invalid', reason: 'validation' });
  });

  it('a client user sees no billing and no internal comments', async () => {
    const sql = app.db.sql;
    await makeComment(sql, ws, { ticketId: T.progress!.id, body: 'internal only', audience: 'internal', authorId: owner.id });
    await makeComment(sql, ws, { ticketId: T.progress!.id, body: 'for the client', audience: 'client', authorId: owner.id });
    const c = await mcpSession(app, (await makeToken(sql, ws, clientUser)).token);
    const out = await c.ok('get_ticket', { ticket: T.progress!.humanId });
    expect(out.billing).toBeUndefined();
    expect(out.comments.map((x: any) => x.body)).toEqual(['for the client']);
    await c.close();
  });
});

describe('create_ticket', () => {
  it('takes names, carries source "mcp", and is attributed to the token person', async () => {
    const out = await s.ok('create_ticket', {
      project: web.key.toLowerCase(),
      title: '  Export to CSV  ',
      description: 'As a **user**',
      kind: 'Feature',
      state: 'in_progress',
      priority: 'urgent',
      assignee: member.email.toUpperCase(),
      labels: ['frontend', 'Backend'],
      dueDate: '2031-02-03',
      parent: T.bug!.humanId,
    });
    expect(Object.keys(out).sort()).toEqual(COMPACT_KEYS);
    expect(out).toMatchObject({ title: 'Export to CSV', state: 'In progress', priority: 'Urgent', assignee: 'Mia Member', dueDate: '2031-02-03' });
    const page = (await rest(`/tickets/${out.humanId}`)).body;
    expect(page).toMatchObject({
      source: 'mcp',
      reporter: { id: member.id },
      kind: { key: 'feature' },
      project: { id: web.id },
      parentId: T.bug!.id,
    });
    expect(page.labels.map((l: any) => l.name).sort()).toEqual(['backend', 'frontend']);
  });

  it('an Inbox ticket with triage (project null)', async () => {
    const out = await s.ok('create_ticket', { project: null, title: 'Triage me' });
    expect(out.humanId).toMatch(/^INBOX-\d+$/);
  });

  it('errors: unknown names with choices, the REST reasons otherwise', async () => {
    const kind = await s.fail('create_ticket', { project: web.key, title: 'x', kind: 'epic' });
    expect(kind).toMatchObject({ code: 'invalid', reason: 'unknown_kind', details: { field: 'kind' } });
    expect(kind.details.choices.map((c: any) => c.key)).toEqual(['request', 'bug', 'feature', 'task']);
    expect(await s.fail('create_ticket', { project: 'NOPE', title: 'x' })).toMatchObject({ code: 'invalid', reason: 'unknown_project' });
    expect(await s.fail('create_ticket', { project: '00000000-0000-4000-8000-000000000000', title: 'x' })).toMatchObject({
      code: 'not_found',
      reason: 'unknown_project',
      details: { field: 'projectId', argument: 'project' },
    });
    expect(await s.fail('create_ticket', { project: hidden.key, title: 'x' })).toMatchObject({ code: 'forbidden', reason: 'project_membership' });
    expect(await s.fail('create_ticket', { project: web.key, title: '' })).toMatchObject({ code: 'invalid', details: { field: 'title' } });
    expect(await s.fail('create_ticket', { project: web.key, title: 'x'.repeat(201) })).toMatchObject({ code: 'invalid', details: { field: 'title' } });
    expect(await s.fail('create_ticket', { title: 'no project' })).toMatchObject({ code: 'invalid', details: { field: 'project' } });
    expect(await s.fail('create_ticket', { project: web.key, title: 'x', estimateMinutes: -1 })).toMatchObject({ code: 'invalid', reason: 'estimate_format' });
    expect(await s.fail('create_ticket', { project: web.key, title: 'x', estimateMinutes: 1.5 })).toMatchObject({ reason: 'estimate_format' });
    expect(await s.fail('create_ticket', { project: web.key, title: 'x', dueDate: '2030-02-30' })).toMatchObject({
      code: 'invalid',
      details: { field: 'dueDate' },
    });
    expect(await s.fail('create_ticket', { project: web.key, title: 'x', parent: T.hidden!.humanId })).toMatchObject({
      code: 'not_found',
      details: { field: 'parent' },
    });
    expect(await s.fail('create_ticket', { project: web.key, title: 'x', assignee: 'Same Name' })).toMatchObject({ reason: 'ambiguous_person' });
    // nothing was created by any of these
    const [{ n }] = await app.db.sql<[{ n: number }]>`select count(*)::int as n from tickets where workspace_id = ${ws.id} and title in ('x', '')`;
    expect(n).toBe(0);
  });

  it('a client user gets the contract reasons (assign_forbidden), named by argument', async () => {
    const c = await mcpSession(app, (await makeToken(app.db.sql, ws, clientUser)).token);
    expect(await c.fail('create_ticket', { project: web.key, title: 'x', assignee: 'me' })).toMatchObject({
      code: 'forbidden',
      reason: 'assign_forbidden',
      details: { field: 'assigneeId', argument: 'assignee' },
    });
    const ok = await c.ok('create_ticket', { project: web.id, title: 'From the client' });
    expect((await rest(`/tickets/${ok.id}`, (await makeToken(app.db.sql, ws, owner)).token)).body).toMatchObject({ source: 'mcp', startedBy: 'client' });
    await c.close();
  });
});

describe('update_ticket', () => {
  it('changes fields given by name and returns the summary; REST sees the change', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: web.id, title: 'Before' });
    const out = await s.ok('update_ticket', { ticket: t.humanId, title: 'After', state: 'In review', assignee: 'me', labels: ['design'], priority: 'low' });
    expect(out).toMatchObject({ title: 'After', state: 'In review', assignee: 'Mia Member', priority: 'Low' });
    const page = (await rest(`/tickets/${t.id}`)).body;
    expect(page.state.key).toBe('in_review');
    expect(page.labels.map((l: any) => l.name)).toEqual(['design']);
    expect(
      page.events
        .filter((e: any) => e.kind === 'field_changed')
        .map((e: any) => e.payload.field)
        .sort(),
    ).toEqual(['assigneeId', 'labelIds', 'priorityId', 'stateId', 'title'].sort());
    const cleared = await s.ok('update_ticket', { ticket: t.id, assignee: null, dueDate: '2031-01-01' });
    expect(cleared).toMatchObject({ assignee: null, dueDate: '2031-01-01' });
  });

  it('errors: unknown state with choices, forbidden fields, archived', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: web.id });
    expect(await s.fail('update_ticket', { ticket: t.id, state: 'Shipped' })).toMatchObject({ reason: 'unknown_state', details: { field: 'state' } });
    expect(await s.fail('update_ticket', { ticket: t.id, billingPolicy: 'gratis' })).toMatchObject({ code: 'invalid', reason: 'policy_format' });
    expect(await s.fail('update_ticket', { ticket: t.id, billingPolicy: 'x'.repeat(61) })).toMatchObject({ reason: 'policy_format' });
    expect(await s.fail('update_ticket', { ticket: T.hidden!.humanId, title: 'x' })).toMatchObject({ code: 'not_found' });
    const c = await mcpSession(app, (await makeToken(app.db.sql, ws, clientUser)).token);
    expect(await c.fail('update_ticket', { ticket: t.id, priority: 'high' })).toMatchObject({
      code: 'forbidden',
      reason: 'field_forbidden',
      details: { field: 'priorityId', argument: 'priority' },
    });
    await c.close();
    await app.db.sql`update tickets set archived = true where id = ${t.id}`;
    expect(await s.fail('update_ticket', { ticket: t.id, title: 'x' })).toMatchObject({ code: 'conflict', reason: 'restore_first' });
  });
});

describe('move_ticket', () => {
  it('moves by project key; the old human id keeps resolving', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: web.id, title: 'Wrong project', billingClientId: null });
    const out = await s.ok('move_ticket', { ticket: t.humanId, project: api.key, kind: 'task' });
    expect(out.humanId).toMatch(new RegExp(`^${api.key}-`));
    expect((await s.ok('get_ticket', { ticket: t.humanId })).humanId).toBe(out.humanId);
  });

  it('routes an Inbox ticket with triage; refuses a move by a non-member of the target', async () => {
    const inbox = await makeTicket(app.db.sql, ws, { projectId: null, title: 'Route me' });
    const out = await s.ok('move_ticket', { ticket: inbox.humanId, project: web.id });
    expect(out.humanId).toMatch(new RegExp(`^${web.key}-`));
    expect(await s.fail('move_ticket', { ticket: out.humanId, project: hidden.key })).toMatchObject({ code: 'forbidden', reason: 'project_membership' });
    expect(await s.fail('move_ticket', { ticket: out.humanId, project: 'NOPE' })).toMatchObject({ code: 'invalid', reason: 'unknown_project' });
  });
});

describe('what one tool outputs is valid input to another', () => {
  it("a summary's names and a ticket's names go straight back in", async () => {
    const sql = app.db.sql;
    const t = await makeTicket(sql, ws, { projectId: web.id, title: 'Round trip', assigneeId: member.id, priorityKey: 'high', stateKey: 'in_review' });
    await addLabels(sql, ws, t.id, ['design', 'frontend']);
    const [item] = (await s.ok('search_tickets', { query: t.humanId })).items;
    const same = await s.ok('update_ticket', {
      ticket: item.humanId,
      state: item.state,
      priority: item.priority,
      assignee: item.assignee,
      dueDate: item.dueDate,
    });
    expect(same).toEqual(item);
    const detail = await s.ok('get_ticket', { ticket: item.id });
    const copy = await s.ok('create_ticket', {
      project: detail.project,
      title: `${detail.title} (copy)`,
      kind: detail.kind,
      state: detail.state,
      priority: detail.priority,
      assignee: detail.assignee,
      billingClient: detail.billingClient,
      labels: detail.labels,
      parent: detail.humanId,
    });
    const copied = await s.ok('get_ticket', { ticket: copy.humanId });
    for (const k of ['project', 'kind', 'state', 'priority', 'assignee', 'billingClient', 'labels'] as const) expect(copied[k], k).toEqual(detail[k]);
    expect(copied.links.parent.id).toBe(t.id);
  });
});
