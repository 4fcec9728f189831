import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, type CallResult, type SessionCookie, type TestApp } from './helpers/app.ts';
import {
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
import { ticketWorld } from './tickets-world.ts';

let app: TestApp;
let ws: Workspace;
let wf: WorkflowIds;
let owner: Person, member: Person, limited: Person, outsider: Person, agent: Person;
let clientUser: Person, clientElevated: Person, otherClientElevated: Person;
let acme: { id: string }, collab: { id: string }, other: { id: string };
let project: { id: string; key: string }, otherProject: { id: string; key: string };
let memberToken: string, ownerToken: string;

beforeAll(async () => {
  ({ app, ws, wf, acme, collab, other, owner, member, limited, outsider, agent, clientUser, clientElevated, otherClientElevated } = await ticketWorld());
  const sql = app.db.sql;
  project = await makeProject(sql, ws, {
    billingClientId: acme.id,
    collaboratorIds: [collab.id],
    members: [{ person: member }, { person: agent }, { person: limited, access: 'limited' }],
  });
  otherProject = await makeProject(sql, ws, { billingClientId: other.id, members: [{ person: member }] });
  memberToken = (await makeToken(sql, ws, member)).token;
  ownerToken = (await makeToken(sql, ws, owner)).token;
});
afterAll(() => app.close());

const path = () => `/api/w/${ws.slug}/tickets`;
const create = (body: unknown, auth: { token?: string; session?: SessionCookie } = { token: memberToken }) => app.call('POST', path(), { ...auth, body });
const ticketCount = async () => Number((await app.db.sql`select count(*)::int as n from tickets where workspace_id = ${ws.id}`)[0]!.n);
const row = async (id: string) => (await app.db.sql`select * from tickets where id = ${id}`)[0]!;

function expectError(res: CallResult, status: number, code: string, reason?: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
  if (reason) expect(res.body.error.details.reason).toBe(reason);
}

/** Sends a request that must fail, and checks that no ticket was created. */
async function refused(body: unknown, status: number, code: string, reason?: string, auth?: { token?: string; session?: SessionCookie }) {
  const before = await ticketCount();
  const res = await create(body, auth);
  expectError(res, status, code, reason);
  expect(await ticketCount()).toBe(before);
  return res;
}

describe('POST /tickets: creating', () => {
  it('creates a project ticket with the workflow defaults and answers 201 with a TicketSummary', async () => {
    const res = await create({ projectId: project.id, title: '  Printer on fire  ' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const s = res.body;
    expect(s).toMatchObject({
      title: 'Printer on fire',
      humanId: expect.stringMatching(new RegExp(`^${project.key}-\\d+$`)),
      kind: { id: wf.kinds.request, key: 'request' },
      state: { id: wf.states.todo, key: 'todo', category: 'open' },
      priority: { id: wf.priorities.normal, key: 'normal' },
      project: { id: project.id, key: project.key },
      queue: null,
      assignee: null,
      reporter: { id: member.id },
      billingClient: { id: acme.id, name: 'Acme' },
      labels: [],
      dueDate: null,
      startDate: null,
      estimateMinutes: null,
      parentId: null,
      commentCount: 0,
    });
    expect(s.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const r = await row(s.id);
    expect(r).toMatchObject({ source: 'api', started_by: 'workspace', reporter_id: member.id, closed_at: null, description: '', archived: false });
    const events = await app.db.sql`select kind, actor_id from ticket_events where ticket_id = ${s.id}`;
    expect(events).toEqual([{ kind: 'created', actor_id: member.id }]);
  });

  it('numbers tickets per project, one after the other', async () => {
    const a = await create({ projectId: otherProject.id, title: 'one' });
    const b = await create({ projectId: otherProject.id, title: 'two' });
    const n = (h: string) => Number(h.split('-')[1]);
    expect(n(b.body.humanId)).toBe(n(a.body.humanId) + 1);
    const refs = await app.db.sql`select number from ticket_refs where ticket_id = ${b.body.id}`;
    expect(refs).toEqual([{ number: n(b.body.humanId) }]);
  });

  it('sets every optional field', async () => {
    const parent = await makeTicket(app.db.sql, ws, { projectId: project.id });
    const body = {
      projectId: project.id,
      title: 'Full',
      description: '# Heading\n\nbody',
      kindId: wf.kinds.bug,
      stateId: wf.states.in_progress,
      priorityId: wf.priorities.high,
      assigneeId: agent.id,
      billingClientId: collab.id,
      labelIds: [wf.labels.frontend, wf.labels.backend, wf.labels.frontend],
      startDate: '2024-02-29',
      dueDate: '2024-03-15',
      estimateMinutes: 90,
      parentId: parent.id,
      someUnknownField: 'ignored',
    };
    const res = await create(body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      kind: { id: wf.kinds.bug },
      state: { id: wf.states.in_progress },
      priority: { id: wf.priorities.high },
      assignee: { id: agent.id },
      billingClient: { id: collab.id },
      startDate: '2024-02-29',
      dueDate: '2024-03-15',
      estimateMinutes: 90,
      parentId: parent.id,
    });
    expect(res.body.labels.map((l: { id: string }) => l.id).sort()).toEqual([wf.labels.frontend, wf.labels.backend].sort());
    expect((await row(res.body.id)).description).toBe('# Heading\n\nbody');
  });

  it('accepts the limits exactly: a 200-character title and a 50,000-character description, 20 labels', async () => {
    const labelIds = [];
    for (let i = 0; i < 14; i++) {
      const [l] = await app.db.sql<
        { id: string }[]
      >`insert into labels (workspace_id, name) values (${ws.id}, ${'extra-' + i + '-' + randomUUID()}) returning id`;
      labelIds.push(l!.id);
    }
    const all = [...Object.values(wf.labels), ...labelIds].slice(0, 20);
    expect(all).toHaveLength(20);
    const res = await create({ projectId: project.id, title: 't'.repeat(200), description: 'd'.repeat(50_000), labelIds: all, estimateMinutes: 0 });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.labels).toHaveLength(20);
    expect(res.body.estimateMinutes).toBe(0);
  });

  it('sets closedAt when the ticket starts in a closed state', async () => {
    const res = await create({ projectId: project.id, title: 'Already done', stateId: wf.states.done });
    expect(res.status).toBe(201);
    expect((await row(res.body.id)).closed_at).toBeInstanceOf(Date);
  });

  it('from a browser session: source ui', async () => {
    const session = await login(app, member.email, member.password);
    const res = await create({ projectId: project.id, title: 'From the UI' }, { session });
    expect(res.status).toBe(201);
    expect((await row(res.body.id)).source).toBe('ui');
  });

  it('an agent token reports as the agent; Owner and Admin create in any project', async () => {
    const agentToken = (await makeToken(app.db.sql, ws, agent, { kind: 'agent', createdBy: owner.id })).token;
    const a = await create({ projectId: project.id, title: 'by agent' }, { token: agentToken });
    expect(a.status).toBe(201);
    expect(a.body.reporter.id).toBe(agent.id);
    expect((await row(a.body.id)).source).toBe('api');
    const o = await create({ projectId: otherProject.id, title: 'by owner' }, { token: ownerToken });
    expect(o.status).toBe(201);
    expect(o.body.reporter.id).toBe(owner.id);
  });

  it('creates an Inbox ticket with projectId null (token with triage)', async () => {
    const res = await create({ projectId: null, title: 'Something came in' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ project: null, queue: 'inbox', billingClient: null, humanId: expect.stringMatching(/^INBOX-\d+$/) });
  });

  it('assigns an elevated client user of the project client', async () => {
    const res = await create({ projectId: project.id, title: 'for the client', assigneeId: clientElevated.id });
    expect(res.status).toBe(201);
    expect(res.body.assignee).toMatchObject({ id: clientElevated.id, clientName: 'Acme' });
  });

  it('billingClientId null makes internal work', async () => {
    const res = await create({ projectId: project.id, title: 'internal', billingClientId: null });
    expect(res.status).toBe(201);
    expect(res.body.billingClient).toBeNull();
  });

  it('a parent with its own estimate loses it when it gains the child', async () => {
    const parent = await makeTicket(app.db.sql, ws, { projectId: project.id, estimateMinutes: 120 });
    const res = await create({ projectId: project.id, title: 'child', parentId: parent.id, estimateMinutes: 30 });
    expect(res.status).toBe(201);
    expect((await row(parent.id)).estimate_minutes).toBeNull();
    const [e] = await app.db.sql`select payload from ticket_events where ticket_id = ${parent.id} and kind = 'field_changed'`;
    expect(e!.payload).toMatchObject({ field: 'estimateMinutes', old: 120, new: null });
  });
});

describe('POST /tickets: client users', () => {
  it('a client user starts a ticket in a project of their client: startedBy client', async () => {
    const token = (await makeToken(app.db.sql, ws, clientUser)).token;
    const res = await create({ projectId: project.id, title: 'Help', description: 'please', dueDate: '2030-01-01' }, { token });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.reporter).toMatchObject({ id: clientUser.id, clientName: 'Acme' });
    expect(res.body.billingClient).toEqual({ id: acme.id, name: 'Acme' });
    expect(await row(res.body.id)).toMatchObject({ started_by: 'client', source: 'api' });
  });

  it('an elevated client user may start it in the customer-resolve state, not in any other', async () => {
    const session = await login(app, clientElevated.email, clientElevated.password);
    expect((await create({ projectId: project.id, title: 'ok', stateId: wf.states.done }, { session })).status).toBe(201);
    await refused({ projectId: project.id, title: 'no', stateId: wf.states.in_progress }, 403, 'forbidden', 'state_forbidden', { session });
  });

  it('403 assign_forbidden and billing_fields_forbidden for client users', async () => {
    const token = (await makeToken(app.db.sql, ws, clientElevated)).token;
    await refused({ projectId: project.id, title: 'x', assigneeId: clientElevated.id }, 403, 'forbidden', 'assign_forbidden', { token });
    await refused({ projectId: project.id, title: 'x', assigneeId: null }, 403, 'forbidden', 'assign_forbidden', { token });
    const res = await refused({ projectId: project.id, title: 'x', billingClientId: acme.id }, 403, 'forbidden', 'billing_fields_forbidden', { token });
    expect(res.body.error.details.field).toBe('billingClientId');
  });

  it('403 field_forbidden for fields outside what client users edit', async () => {
    const token = (await makeToken(app.db.sql, ws, clientUser)).token;
    for (const [field, value] of [
      ['kindId', wf.kinds.bug],
      ['priorityId', wf.priorities.urgent],
      ['labelIds', [wf.labels.frontend]],
      ['estimateMinutes', 5],
    ] as const) {
      const res = await refused({ projectId: project.id, title: 'x', [field]: value }, 403, 'forbidden', 'field_forbidden', { token });
      expect(res.body.error.details.field).toBe(field);
    }
  });

  it('404 unknown_project for a project of another client; 403 for the Inbox', async () => {
    const token = (await makeToken(app.db.sql, ws, clientUser)).token;
    await refused({ projectId: otherProject.id, title: 'x' }, 404, 'not_found', 'unknown_project', { token });
    await refused({ projectId: null, title: 'x' }, 403, 'forbidden', undefined, { token });
    const otherToken = (await makeToken(app.db.sql, ws, otherClientElevated)).token;
    await refused({ projectId: project.id, title: 'x' }, 404, 'not_found', 'unknown_project', { token: otherToken });
  });
});

describe('POST /tickets: who may start tickets where', () => {
  it('403 for a limited member and for a workspace user who is not a member of the project', async () => {
    for (const person of [limited, outsider]) {
      const token = (await makeToken(app.db.sql, ws, person)).token;
      await refused({ projectId: project.id, title: 'x' }, 403, 'forbidden', undefined, { token });
    }
  });

  it('404 unknown_project for an unknown project or one of another workspace', async () => {
    await refused({ projectId: randomUUID(), title: 'x' }, 404, 'not_found', 'unknown_project');
    const ws2 = await makeWorkspace(app.db.sql);
    const foreign = await makeProject(app.db.sql, ws2);
    await refused({ projectId: foreign.id, title: 'x' }, 404, 'not_found', 'unknown_project', { token: ownerToken });
  });

  it('Inbox: 403 for a token without triage, and for a project-restricted token even with triage', async () => {
    const noTriage = (await makeToken(app.db.sql, ws, member, { scopes: ['read', 'write'] })).token;
    const res = await refused({ projectId: null, title: 'x' }, 403, 'forbidden', 'missing_scope', { token: noTriage });
    expect(res.body.error.details.scope).toBe('triage');
    const restricted = (await makeToken(app.db.sql, ws, member, { projectIds: [project.id] })).token;
    await refused({ projectId: null, title: 'x' }, 403, 'forbidden', undefined, { token: restricted });
  });

  it('a project-restricted token creates only in its projects', async () => {
    const token = (await makeToken(app.db.sql, ws, member, { projectIds: [project.id] })).token;
    expect((await create({ projectId: project.id, title: 'inside' }, { token })).status).toBe(201);
    await refused({ projectId: otherProject.id, title: 'outside' }, 403, 'forbidden', undefined, { token });
  });

  it('403 missing_scope for a token without write', async () => {
    const token = (await makeToken(app.db.sql, ws, member, { scopes: ['read'] })).token;
    await refused({ projectId: project.id, title: 'x' }, 403, 'forbidden', 'missing_scope', { token });
  });

  it('401 without credentials', async () => {
    const before = await ticketCount();
    const res = await app.call('POST', path(), { body: { projectId: project.id, title: 'x' } });
    expect(res.status).toBe(401);
    expect(await ticketCount()).toBe(before);
  });
});

describe('POST /tickets: validation', () => {
  it('400 unknown_kind, unknown_state, unknown_priority, unknown_label (also ids of another workspace)', async () => {
    const ws2 = await makeWorkspace(app.db.sql);
    const wf2 = await workflowIds(app.db.sql, ws2);
    for (const [field, reason, foreign] of [
      ['kindId', 'unknown_kind', wf2.kinds.bug],
      ['stateId', 'unknown_state', wf2.states.todo],
      ['priorityId', 'unknown_priority', wf2.priorities.low],
    ] as const) {
      const res = await refused({ projectId: project.id, title: 'x', [field]: randomUUID() }, 400, 'invalid', reason);
      expect(res.body.error.details.field).toBe(field);
      await refused({ projectId: project.id, title: 'x', [field]: foreign }, 400, 'invalid', reason);
    }
    await refused({ projectId: project.id, title: 'x', labelIds: [wf.labels.design, randomUUID()] }, 400, 'invalid', 'unknown_label');
    await refused({ projectId: project.id, title: 'x', labelIds: [wf2.labels.design] }, 400, 'invalid', 'unknown_label');
  });

  it('400 unknown_person and assignee_ineligible', async () => {
    await refused({ projectId: project.id, title: 'x', assigneeId: randomUUID() }, 400, 'invalid', 'unknown_person');
    const ws2 = await makeWorkspace(app.db.sql);
    const stranger = await makeUser(app.db.sql, ws2, { role: 'member' });
    await refused({ projectId: project.id, title: 'x', assigneeId: stranger.id }, 400, 'invalid', 'unknown_person');
    await refused({ projectId: project.id, title: 'x', assigneeId: clientUser.id }, 400, 'invalid', 'assignee_ineligible');
    await refused({ projectId: project.id, title: 'x', assigneeId: otherClientElevated.id }, 400, 'invalid', 'assignee_ineligible');
    await refused({ projectId: null, title: 'x', assigneeId: clientElevated.id }, 400, 'invalid', 'assignee_ineligible');
  });

  it('400 billing_client_scope for a client that neither bills nor collaborates on the project', async () => {
    await refused({ projectId: project.id, title: 'x', billingClientId: other.id }, 400, 'invalid', 'billing_client_scope');
    await refused({ projectId: project.id, title: 'x', billingClientId: randomUUID() }, 400, 'invalid', 'billing_client_scope');
  });

  it('400 estimate_format for a negative, fractional, textual or huge estimate', async () => {
    for (const estimateMinutes of [-1, 1.5, '30', 10_000_001, true]) {
      const res = await refused({ projectId: project.id, title: 'x', estimateMinutes }, 400, 'invalid', 'estimate_format');
      expect(res.body.error.details.field).toBe('estimateMinutes');
    }
  });

  it('parent: 404 when not visible, 409 parent_depth beyond ten edges', async () => {
    await refused({ projectId: project.id, title: 'x', parentId: randomUUID() }, 404, 'not_found');
    const hidden = await makeTicket(app.db.sql, ws, { projectId: otherProject.id });
    // the outsider may start Inbox tickets but cannot see a ticket of a project they are not in
    const outsiderToken = (await makeToken(app.db.sql, ws, outsider)).token;
    await refused({ projectId: null, title: 'x', parentId: hidden.id }, 404, 'not_found', undefined, { token: outsiderToken });

    let parentId: string | null = null;
    const chain: string[] = [];
    for (let i = 0; i <= 10; i++) {
      const t = await makeTicket(app.db.sql, ws, { projectId: project.id, parentId });
      chain.push(t.id);
      parentId = t.id;
    }
    // chain[9] is 9 edges below the root: a child under it is 10 edges deep, which is allowed
    expect((await create({ projectId: project.id, title: 'deep ok', parentId: chain[9] })).status).toBe(201);
    const res = await refused({ projectId: project.id, title: 'too deep', parentId: chain[10] }, 409, 'conflict', 'parent_depth');
    expect(res.body.error.details.depth).toBe(11);
  });

  it('400 for bad values of every field, in the envelope, creating nothing', async () => {
    const base = { projectId: project.id, title: 'x' };
    const cases: Record<string, unknown>[] = [
      {},
      { projectId: project.id },
      { title: 'no project field' },
      { ...base, projectId: 'not-a-uuid' },
      { ...base, projectId: 42 },
      { ...base, title: '' },
      { ...base, title: '    ' },
      { ...base, title: 't'.repeat(201) },
      { ...base, title: 7 },
      { ...base, title: null },
      { ...base, description: 'd'.repeat(50_001) },
      { ...base, description: null },
      { ...base, kindId: 'bug' },
      { ...base, stateId: 12 },
      { ...base, priorityId: null },
      { ...base, assigneeId: 'me' },
      { ...base, billingClientId: 5 },
      { ...base, labelIds: wf.labels.frontend },
      { ...base, labelIds: ['nope'] },
      { ...base, labelIds: Array.from({ length: 21 }, () => randomUUID()) },
      { ...base, startDate: '2024-02-30' },
      { ...base, dueDate: 'tomorrow' },
      { ...base, dueDate: '2024-1-5' },
      { ...base, startDate: 20240101 },
      { ...base, parentId: 'P-1' },
    ];
    for (const body of cases) {
      const res = await refused(body, 400, 'invalid');
      expect(res.body.error.details.reason, JSON.stringify(body)).toBe('validation');
    }
  });

  it('415 for a body that is not JSON, 400 bad_json for broken JSON', async () => {
    const before = await ticketCount();
    const text = await app.call('POST', path(), { token: memberToken, rawBody: 'title=x', headers: { 'content-type': 'text/plain' } });
    expectError(text, 415, 'unsupported_media_type');
    const broken = await app.call('POST', path(), { token: memberToken, rawBody: '{"title":', headers: { 'content-type': 'application/json' } });
    expectError(broken, 400, 'invalid', 'bad_json');
    expect(await ticketCount()).toBe(before);
  });
});
