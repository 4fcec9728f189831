import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type TestApp } from './helpers/app.ts';
import {
  makeBank,
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

let app: TestApp;
let ws: Workspace;
let wf: WorkflowIds;
let member: Person, other: Person, clientElevated: Person;
let acme: { id: string }, collab: { id: string };
let project: { id: string; key: string };
let token: string;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  wf = await workflowIds(sql, ws);
  acme = await makeClient(sql, ws, { name: 'Acme' });
  collab = await makeClient(sql, ws, { name: 'Collab' });
  member = await makeUser(sql, ws, { role: 'member' });
  other = await makeUser(sql, ws, { role: 'member', name: 'Other Person' });
  clientElevated = await makeUser(sql, ws, { role: 'client_elevated', clientId: acme.id });
  project = await makeProject(sql, ws, { billingClientId: acme.id, collaboratorIds: [collab.id], members: [{ person: member }] });
  token = (await makeToken(sql, ws, member)).token;
});
afterAll(() => app.close());

const url = (ref: string) => `/api/w/${ws.slug}/tickets/${ref}`;
const patch = (ref: string, body: unknown, headers?: Record<string, string>) => app.call('PATCH', url(ref), { token, body, headers });
const newTicket = (opts: Parameters<typeof makeTicket>[2] = {}) => makeTicket(app.db.sql, ws, { projectId: project.id, reporterId: member.id, ...opts });
const row = async (id: string) => (await app.db.sql`select * from tickets where id = ${id}`)[0]!;
const fieldEvents = (id: string) =>
  app.db.sql<{ payload: { field: string; old: unknown; new: unknown } }[]>`
    select payload from ticket_events where ticket_id = ${id} and kind = 'field_changed' order by created_at, id`;

describe('PATCH /tickets/{ref}', () => {
  it('changes only the fields sent, answers 200 with the TicketPage, and writes one event per changed field', async () => {
    const t = await newTicket({ title: 'Before', description: 'old text' });
    const before = await row(t.id);
    const res = await patch(t.humanId, {
      title: '  After  ',
      priorityId: wf.priorities.urgent,
      labelIds: [wf.labels.frontend, wf.labels.design],
      startDate: '2024-05-01',
      dueDate: '2024-05-31',
      unknownField: 'ignored',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      id: t.id,
      title: 'After',
      description: 'old text',
      priority: { id: wf.priorities.urgent },
      startDate: '2024-05-01',
      dueDate: '2024-05-31',
      permissions: { edit: true },
    });
    expect(res.body.labels.map((l: { id: string }) => l.id).sort()).toEqual([wf.labels.frontend, wf.labels.design].sort());
    expect(res.headers.get('etag')).toBe((await app.call('GET', url(t.id), { token })).headers.get('etag'));
    const after = await row(t.id);
    expect(after.updated_at.getTime()).toBeGreaterThan(before.updated_at.getTime());
    expect(after.description).toBe('old text');
    const events = (await fieldEvents(t.id)).map((e) => e.payload);
    expect(events).toHaveLength(5);
    expect(events).toContainEqual({ field: 'title', old: 'Before', new: 'After' });
    expect(events).toContainEqual({ field: 'priorityId', old: wf.priorities.normal, new: wf.priorities.urgent });
    expect(events).toContainEqual({ field: 'labelIds', old: [], new: [wf.labels.frontend, wf.labels.design].sort() });
    expect(events).toContainEqual({ field: 'startDate', old: null, new: '2024-05-01' });
    expect(events).toContainEqual({ field: 'dueDate', old: null, new: '2024-05-31' });
  });

  it('writes no event for fields sent with their current value', async () => {
    const t = await newTicket({ title: 'Same', dueDate: '2024-01-01' });
    await patch(t.id, { labelIds: [wf.labels.backend] });
    const before = await row(t.id);
    const res = await patch(t.id, {
      title: 'Same',
      dueDate: '2024-01-01',
      stateId: wf.states.todo,
      labelIds: [wf.labels.backend, wf.labels.backend],
      assigneeId: null,
    });
    expect(res.status).toBe(200);
    expect(await fieldEvents(t.id)).toHaveLength(1);
    expect((await row(t.id)).updated_at).toEqual(before.updated_at);
  });

  it('an empty body changes nothing and answers the page', async () => {
    const t = await newTicket();
    const res = await patch(t.id, {});
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(t.id);
    expect(await fieldEvents(t.id)).toHaveLength(0);
  });

  it('labels: replaces the whole set; the event carries both id lists', async () => {
    const t = await newTicket();
    await patch(t.id, { labelIds: [wf.labels.frontend, wf.labels.backend] });
    const res = await patch(t.id, { labelIds: [wf.labels.backend, wf.labels.billing] });
    expect(res.body.labels.map((l: { id: string }) => l.id).sort()).toEqual([wf.labels.backend, wf.labels.billing].sort());
    const last = (await fieldEvents(t.id)).at(-1)!.payload;
    expect(last).toEqual({ field: 'labelIds', old: [wf.labels.frontend, wf.labels.backend].sort(), new: [wf.labels.backend, wf.labels.billing].sort() });
    const cleared = await patch(t.id, { labelIds: [] });
    expect(cleared.body.labels).toEqual([]);
  });

  it('open -> closed sets closedAt; closed -> closed keeps it; closed -> open keeps the last close', async () => {
    const t = await newTicket();
    const closed = await patch(t.id, { stateId: wf.states.done });
    expect(closed.status).toBe(200);
    expect(closed.body.state).toMatchObject({ id: wf.states.done, category: 'closed' });
    const closedAt = closed.body.closedAt;
    expect(closedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const cancelled = await patch(t.id, { stateId: wf.states.cancelled });
    expect(cancelled.body.closedAt).toBe(closedAt);
    const reopened = await patch(t.id, { stateId: wf.states.in_progress });
    expect(reopened.body.state.category).toBe('open');
    expect(reopened.body.closedAt).toBe(closedAt);
    await new Promise((r) => setTimeout(r, 5));
    const again = await patch(t.id, { stateId: wf.states.done });
    expect(Date.parse(again.body.closedAt)).toBeGreaterThan(Date.parse(closedAt));
    expect((await fieldEvents(t.id)).map((e) => e.payload.field)).toEqual(['stateId', 'stateId', 'stateId', 'stateId']);
  });

  it('assigns, reassigns and unassigns', async () => {
    const t = await newTicket();
    expect((await patch(t.id, { assigneeId: other.id })).body.assignee).toMatchObject({ id: other.id, name: 'Other Person' });
    expect((await patch(t.id, { assigneeId: clientElevated.id })).body.assignee).toMatchObject({ id: clientElevated.id, clientName: 'Acme' });
    expect((await patch(t.id, { assigneeId: null })).body.assignee).toBeNull();
    expect((await fieldEvents(t.id)).map((e) => e.payload)).toEqual([
      { field: 'assigneeId', old: null, new: other.id },
      { field: 'assigneeId', old: other.id, new: clientElevated.id },
      { field: 'assigneeId', old: clientElevated.id, new: null },
    ]);
  });

  it('billing fields: client, policy, mode and description', async () => {
    const t = await newTicket();
    const bank = (await makeBank(app.db.sql, ws, { clientId: collab.id })).id;
    const res = await patch(t.id, { billingClientId: collab.id, billingPolicy: `bank:${bank}`, billingMode: 'on_close', billingDescription: 'Support' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.billingClient).toEqual({ id: collab.id, name: 'Collab' });
    expect(res.body.billing).toMatchObject({ billingPolicy: `bank:${bank}`, billingMode: 'on_close', billingDescription: 'Support' });
    expect(await row(t.id)).toMatchObject({
      billing_client_id: collab.id,
      billing_policy: `bank:${bank}`,
      billing_mode: 'on_close',
      billing_description: 'Support',
    });
    for (const policy of ['free', 'paid']) expect((await patch(t.id, { billingPolicy: policy })).body.billing.billingPolicy).toBe(policy);
    const reset = await patch(t.id, { billingClientId: null, billingPolicy: null, billingMode: null, billingDescription: null });
    expect(reset.body.billingClient).toBeNull();
    expect(await row(t.id)).toMatchObject({ billing_client_id: null, billing_policy: null, billing_mode: null, billing_description: null });
    expect((await patch(t.id, { billingDescription: 'd'.repeat(500) })).status).toBe(200);
  });

  it('estimateMinutes on a leaf; clearing it is allowed on a parent', async () => {
    const parent = await newTicket({ estimateMinutes: 60 });
    const leaf = await newTicket();
    expect((await patch(leaf.id, { estimateMinutes: 45 })).body.estimateMinutes).toBe(45);
    expect((await patch(leaf.id, { estimateMinutes: 0 })).body.estimateMinutes).toBe(0);
    await newTicket({ parentId: parent.id });
    expect((await patch(parent.id, { estimateMinutes: null })).status).toBe(200);
    expect((await row(parent.id)).estimate_minutes).toBeNull();
  });

  it('accepts a lowercase human id; kind and a 50,000-character description change', async () => {
    const t = await newTicket();
    const res = await patch(t.humanId.toLowerCase(), { kindId: wf.kinds.bug, description: 'x'.repeat(50_000) });
    expect(res.status).toBe(200);
    expect(res.body.kind.id).toBe(wf.kinds.bug);
    expect((await row(t.id)).description).toHaveLength(50_000);
  });

  it('a client user (the reporter) edits title, description and dates, and moves to the customer-resolve state', async () => {
    const t = await newTicket({ reporterId: clientElevated.id });
    const session = await login(app, clientElevated.email, clientElevated.password);
    const res = await app.call('PATCH', url(t.id), { session, body: { title: 'By client', dueDate: null, stateId: wf.states.done } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ title: 'By client', state: { id: wf.states.done } });
    expect(res.body.billing).toBeUndefined();
    const back = await app.call('PATCH', url(t.id), { session, body: { stateId: wf.states.todo } });
    expect(back.status).toBe(200);
  });
});

describe('PATCH /tickets/{ref} with If-Match', () => {
  it('applies the change when If-Match is the current ETag and answers the new one', async () => {
    const t = await newTicket();
    const etag = (await app.call('GET', url(t.id), { token })).headers.get('etag')!;
    expect(etag).toBeTruthy();
    const res = await patch(t.id, { title: 'Matched' }, { 'if-match': etag });
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).not.toBe(etag);
    expect((await patch(t.id, { title: 'Star' }, { 'if-match': '*' })).status).toBe(200);
  });

  it('412 precondition_failed for a stale or weak tag, changing nothing', async () => {
    const t = await newTicket({ title: 'Original' });
    const stale = (await app.call('GET', url(t.id), { token })).headers.get('etag')!;
    expect((await patch(t.id, { priorityId: wf.priorities.low })).status).toBe(200);
    const current = (await app.call('GET', url(t.id), { token })).headers.get('etag')!;
    const before = await row(t.id);
    for (const tag of [stale, `W/${current}`, '"nonsense"']) {
      const res = await patch(t.id, { title: 'Lost update' }, { 'if-match': tag });
      expect(res.status).toBe(412);
      expect(res.body.error.code).toBe('precondition_failed');
      expect(res.headers.get('etag')).toBe(current);
    }
    expect(await row(t.id)).toEqual(before);
  });

  it('two PATCHes racing with the same If-Match: exactly one wins', async () => {
    for (let round = 0; round < 5; round++) {
      const t = await newTicket({ title: 'Race' });
      const etag = (await app.call('GET', url(t.id), { token })).headers.get('etag')!;
      const results = await Promise.all(['A', 'B', 'C'].map((who) => patch(t.id, { title: `Winner ${who}` }, { 'if-match': etag })));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 412, 412]);
      const winner = results.find((r) => r.status === 200)!;
      expect((await row(t.id)).title).toBe(winner.body.title);
      expect(await fieldEvents(t.id)).toHaveLength(1);
    }
  });
});
