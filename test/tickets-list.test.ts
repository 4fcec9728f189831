import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  addLabels,
  addViewers,
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

// 20:00 UTC on 10 March: already 11 March in Kiritimati (UTC+14).
const NOW = new Date('2030-03-10T20:00:00.000Z');

let app: TestApp;
let ws: Workspace;
let wf: WorkflowIds;
let owner: Person;
let member: Person;
let islander: Person;
let clientUser: Person;
let ownerToken: string;
let client: { id: string };
let freeClient: { id: string };
let p1: { id: string; key: string };
let p2: { id: string; key: string };
const T: Record<string, { id: string; humanId: string }> = {};
const BANK = '0b7c2a4e-5d6f-4a8b-9c0d-1e2f3a4b5c6d';

beforeAll(async () => {
  app = await startTestApp({ now: () => NOW });
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  wf = await workflowIds(sql, ws);
  owner = await makeUser(sql, ws, { role: 'owner' });
  member = await makeUser(sql, ws, { role: 'member' });
  islander = await makeUser(sql, ws, { role: 'owner', timezone: 'Pacific/Kiritimati' });
  client = await makeClient(sql, ws);
  freeClient = await makeClient(sql, ws);
  await sql`update clients set billing_policy = 'free' where id = ${freeClient.id}`;
  clientUser = await makeUser(sql, ws, { role: 'client', clientId: client.id });
  p1 = await makeProject(sql, ws, { billingClientId: client.id, members: [{ person: member }] });
  p2 = await makeProject(sql, ws, { billingClientId: freeClient.id });
  ownerToken = (await makeToken(sql, ws, owner)).token;

  let minute = 0;
  // strictly increasing updatedAt in creation order, so list order is known
  const at = () => new Date(NOW.getTime() - 100 * 60_000 + minute++ * 60_000);
  T.bug = await makeTicket(sql, ws, { projectId: p1.id, kindKey: 'bug', priorityKey: 'urgent', assigneeId: member.id, reporterId: owner.id, updatedAt: at() });
  T.feature = await makeTicket(sql, ws, { projectId: p1.id, kindKey: 'feature', stateKey: 'in_progress', reporterId: clientUser.id, updatedAt: at() });
  T.done = await makeTicket(sql, ws, { projectId: p1.id, stateKey: 'done', assigneeId: owner.id, updatedAt: at() });
  T.free = await makeTicket(sql, ws, { projectId: p2.id, priorityKey: 'low', updatedAt: at() });
  T.internal = await makeTicket(sql, ws, { projectId: p2.id, billingClientId: null, updatedAt: at() });
  T.inbox = await makeTicket(sql, ws, { title: 'Inbox one', updatedAt: at() });
  T.archived = await makeTicket(sql, ws, { projectId: p1.id, archived: true, updatedAt: at() });
  T.overdue = await makeTicket(sql, ws, { projectId: p2.id, dueDate: '2030-03-09', updatedAt: at() });
  T.dueToday = await makeTicket(sql, ws, { projectId: p2.id, dueDate: '2030-03-10', updatedAt: at() });
  T.dueIn6 = await makeTicket(sql, ws, { projectId: p2.id, dueDate: '2030-03-16', updatedAt: at() });
  T.dueIn7 = await makeTicket(sql, ws, { projectId: p2.id, dueDate: '2030-03-17', updatedAt: at() });
  T.closedOverdue = await makeTicket(sql, ws, { projectId: p2.id, dueDate: '2030-03-01', stateKey: 'cancelled', updatedAt: at() });
  T.banked = await makeTicket(sql, ws, { projectId: p1.id, updatedAt: at() });
  await makeBank(sql, ws, { clientId: client.id, id: BANK });
  await sql`update tickets set billing_policy = ${`bank:${BANK}`} where id = ${T.banked!.id}`;
  await addLabels(sql, ws, T.bug!.id, ['frontend']);
  await addLabels(sql, ws, T.feature!.id, ['backend', 'design']);
  await addViewers(sql, T.free!.id, [member.id]);
});
afterAll(() => app.close());

async function list(query: string, token = ownerToken) {
  return app.call('GET', `/api/w/${ws.slug}/tickets${query ? `?${query}` : ''}`, { token });
}

async function ids(query: string, token = ownerToken): Promise<string[]> {
  const res = await list(query, token);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.items.map((t: { id: string }) => t.id);
}

const named = (...names: string[]) => names.map((n) => T[n]!.id);
const sorted = (xs: string[]) => [...xs].sort();

describe('GET /tickets: order, shape, archived, limit', () => {
  it('lists non-archived visible tickets, most recently updated first, as TicketSummary', async () => {
    const res = await list('');
    expect(res.status).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    const all = ['bug', 'feature', 'done', 'free', 'internal', 'inbox', 'overdue', 'dueToday', 'dueIn6', 'dueIn7', 'closedOverdue', 'banked'];
    expect(res.body.items.map((t: { id: string }) => t.id)).toEqual(named(...all).reverse());
    const bug = res.body.items.find((t: { id: string }) => t.id === T.bug!.id);
    expect(Object.keys(bug).sort()).toEqual(
      [
        'id',
        'humanId',
        'title',
        'kind',
        'state',
        'priority',
        'project',
        'queue',
        'assignee',
        'reporter',
        'billingClient',
        'labels',
        'dueDate',
        'startDate',
        'estimateMinutes',
        'parentId',
        'commentCount',
        'createdAt',
        'updatedAt',
      ].sort(),
    );
    expect(bug).toMatchObject({ humanId: T.bug!.humanId, kind: { key: 'bug' }, labels: [{ name: 'frontend' }], queue: null });
    expect(res.body.items.find((t: { id: string }) => t.id === T.inbox!.id).queue).toBe('inbox');
  });

  it('archived=true lists archived tickets only; archived=false is the default', async () => {
    expect(await ids('archived=true')).toEqual(named('archived'));
    expect(await ids('archived=false')).toEqual(await ids(''));
    expect(await ids('')).not.toContain(T.archived!.id);
  });

  it('limit caps the page and yields a cursor', async () => {
    const res = await list('limit=3');
    expect(res.body.items).toHaveLength(3);
    expect(typeof res.body.nextCursor).toBe('string');
    const res50 = await list('limit=50');
    expect(res50.body.items).toHaveLength(12);
    expect(res50.body.nextCursor).toBeNull();
  });

  it('ignores unknown query parameters', async () => {
    expect(await ids('frobnicate=1&sort=title')).toEqual(await ids(''));
  });
});

describe('GET /tickets: filters', () => {
  it('projectId', async () => {
    expect(sorted(await ids(`projectId=${p1.id}`))).toEqual(sorted(named('bug', 'feature', 'done', 'banked')));
  });

  it('queue=inbox', async () => {
    expect(await ids('queue=inbox')).toEqual(named('inbox'));
  });

  it('stateIds, kindIds, priorityIds (comma-separated, any of)', async () => {
    expect(sorted(await ids(`stateIds=${wf.states.in_progress},${wf.states.done}`))).toEqual(sorted(named('feature', 'done')));
    expect(sorted(await ids(`kindIds=${wf.kinds.bug},${wf.kinds.feature}`))).toEqual(sorted(named('bug', 'feature')));
    expect(sorted(await ids(`priorityIds=${wf.priorities.urgent},${wf.priorities.low}`))).toEqual(sorted(named('bug', 'free')));
    expect(await ids(`stateIds=${wf.states.in_progress!.toUpperCase()}`)).toEqual(named('feature'));
    // the parameter repeated is the same as a comma-separated list
    expect(sorted(await ids(`stateIds=${wf.states.in_progress}&stateIds=${wf.states.done}`))).toEqual(sorted(named('feature', 'done')));
  });

  it('labelIds: tickets with any of the labels', async () => {
    expect(sorted(await ids(`labelIds=${wf.labels.frontend},${wf.labels.design}`))).toEqual(sorted(named('bug', 'feature')));
    expect(await ids(`labelIds=${wf.labels.billing}`)).toEqual([]);
  });

  it('stateCategory', async () => {
    expect(sorted(await ids('stateCategory=closed'))).toEqual(sorted(named('done', 'closedOverdue')));
    expect(await ids('stateCategory=open')).not.toContain(T.done!.id);
  });

  it('assigneeId and reporterId: uuid, me, none', async () => {
    expect(await ids(`assigneeId=${member.id}`)).toEqual(named('bug'));
    expect(await ids('assigneeId=me')).toEqual(named('done'));
    expect(await ids('assigneeId=none')).not.toContain(T.bug!.id);
    expect((await ids('assigneeId=none')).length).toBe(10);
    expect(await ids(`reporterId=${clientUser.id}`)).toEqual(named('feature'));
    expect(await ids('reporterId=me')).toEqual(named('bug'));
    expect((await ids('reporterId=none')).length).toBe(10);
  });

  it('viewerId: viewers, the reporter counting as one; none', async () => {
    expect(await ids(`viewerId=${member.id}`)).toEqual(named('free'));
    expect(await ids('viewerId=me')).toEqual(named('bug'));
    const none = await ids('viewerId=none');
    expect(none).not.toContain(T.free!.id);
    expect(none).not.toContain(T.bug!.id);
    expect(none).toContain(T.done!.id);
  });

  it('billingClientId: uuid or none (internal work)', async () => {
    expect(sorted(await ids(`billingClientId=${client.id}`))).toEqual(sorted(named('bug', 'feature', 'done', 'banked')));
    expect(sorted(await ids('billingClientId=none'))).toEqual(sorted(named('internal', 'inbox')));
  });

  it('billingPolicy: the effective policy (ticket, project, client; default paid)', async () => {
    const free = await ids('billingPolicy=free');
    // p2's client is free; the internal ticket of p2 inherits the project's client's policy too
    expect(sorted(free)).toEqual(sorted(named('free', 'internal', 'overdue', 'dueToday', 'dueIn6', 'dueIn7', 'closedOverdue')));
    expect(sorted(await ids('billingPolicy=paid'))).toEqual(sorted(named('bug', 'feature', 'done', 'inbox')));
    expect(await ids(`billingPolicy=bank:${BANK}`)).toEqual(named('banked'));
    expect(await ids(`billingPolicy=bank:${BANK.toUpperCase()}`)).toEqual(named('banked'));
  });

  it("due: overdue (open, before today), week (today + 6 days), none; days in the caller's timezone", async () => {
    expect(await ids('due=overdue')).toEqual(named('overdue'));
    expect(sorted(await ids('due=week'))).toEqual(sorted(named('dueToday', 'dueIn6')));
    expect((await ids('due=none')).length).toBe(7);
    const islandToken = (await makeToken(app.db.sql, ws, islander)).token;
    expect(sorted(await ids('due=overdue', islandToken))).toEqual(sorted(named('overdue', 'dueToday')));
    expect(sorted(await ids('due=week', islandToken))).toEqual(sorted(named('dueIn6', 'dueIn7')));
  });

  it('combines filters with AND', async () => {
    expect(await ids(`projectId=${p1.id}&kindIds=${wf.kinds.bug}&assigneeId=${member.id}`)).toEqual(named('bug'));
    expect(await ids(`projectId=${p2.id}&kindIds=${wf.kinds.bug}`)).toEqual([]);
    expect(await ids(`projectId=${p1.id}&queue=inbox`)).toEqual([]);
  });
});

describe('GET /tickets: access', () => {
  it('403 forbidden for queue=inbox without triage, on a project-restricted token, or for a client user', async () => {
    const sql = app.db.sql;
    const noTriage = (await makeToken(sql, ws, owner, { scopes: ['read'] })).token;
    const restricted = (await makeToken(sql, ws, owner, { projectIds: [p1.id] })).token;
    const clientTok = (await makeToken(sql, ws, clientUser)).token;
    const r1 = await list('queue=inbox', noTriage);
    expect(r1.status).toBe(403);
    expect(r1.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'missing_scope', scope: 'triage' } });
    const r2 = await list('queue=inbox', restricted);
    expect(r2.status).toBe(403);
    expect(r2.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'project_not_allowed' } });
    const r3 = await list('queue=inbox', clientTok);
    expect(r3.status).toBe(403);
    expect(r3.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'inbox_forbidden' } });
    // without the filter, such tokens simply do not see Inbox tickets
    expect(await ids('', noTriage)).not.toContain(T.inbox!.id);
  });

  it('403 forbidden for a projectId outside the token allow-list', async () => {
    const restricted = (await makeToken(app.db.sql, ws, owner, { projectIds: [p1.id] })).token;
    const res = await list(`projectId=${p2.id}`, restricted);
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'project_not_allowed', projectId: p2.id } });
    expect(sorted(await ids(`projectId=${p1.id}`, restricted))).toEqual(sorted(named('bug', 'feature', 'done', 'banked')));
    expect(sorted(await ids('', restricted))).toEqual(sorted(named('bug', 'feature', 'done', 'banked')));
  });

  it('403 forbidden for a billingPolicy filter from a client user', async () => {
    const clientTok = (await makeToken(app.db.sql, ws, clientUser)).token;
    const res = await list('billingPolicy=paid', clientTok);
    expect(res.status).toBe(403);
    expect(res.body.error.details).toMatchObject({ reason: 'billing_fields_forbidden', field: 'billingPolicy' });
  });

  it('403 for a token without read, 401 without a credential', async () => {
    const writeOnly = (await makeToken(app.db.sql, ws, owner, { scopes: ['write'] })).token;
    const res = await list('', writeOnly);
    expect(res.status).toBe(403);
    expect(res.body.error.details).toMatchObject({ reason: 'missing_scope', scope: 'read' });
    expect((await app.call('GET', `/api/w/${ws.slug}/tickets`)).status).toBe(401);
  });
});

describe('GET /tickets: bad query values', () => {
  const uuids = (n: number) => Array.from({ length: n }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`).join(',');
  const cases: [string, string][] = [
    ['projectId=not-a-uuid', 'projectId'],
    ['queue=review', 'queue'],
    ['queue=', 'queue'],
    ['stateIds=abc', 'stateIds'],
    ['stateIds=', 'stateIds'],
    [`stateIds=${uuids(21)}`, 'stateIds'],
    ['kindIds=1,2', 'kindIds'],
    [`labelIds=${uuids(21)}`, 'labelIds'],
    ['priorityIds=urgent', 'priorityIds'],
    ['stateCategory=pending', 'stateCategory'],
    ['assigneeId=someone', 'assigneeId'],
    ['reporterId=ME', 'reporterId'],
    ['viewerId=', 'viewerId'],
    ['billingClientId=nobody', 'billingClientId'],
    ['billingPolicy=bank:nope', 'billingPolicy'],
    ['billingPolicy=expensive', 'billingPolicy'],
    [`billingPolicy=bank:${'a'.repeat(60)}`, 'billingPolicy'],
    ['due=soon', 'due'],
    [`q=${'x'.repeat(201)}`, 'q'],
    ['archived=yes', 'archived'],
    [`cursor=${'a'.repeat(201)}`, 'cursor'],
    ['limit=0', 'limit'],
    ['limit=51', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['limit=-1', 'limit'],
    ['due=week&due=none', 'due'],
  ];
  it.each(cases)('400 invalid for %s', async (query, field) => {
    const res = await list(query);
    expect(res.status).toBe(400);
    // the field names the parameter (and, for a list, the failing item: `stateIds.0`)
    expect(res.body.error).toMatchObject({
      code: 'invalid',
      details: { reason: 'validation', field: expect.stringMatching(new RegExp(`^${field}(\\.\\d+)?$`)) },
    });
  });

  it.each(['nonsense', 'eyJ4IjoxfQ', 'WyJ1cGRhdGVkIiwieCIsInkiXQ', '!!!', 'W10'])('400 bad_cursor for a malformed cursor %s', async (cursor) => {
    const res = await list(`cursor=${cursor}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid', details: { reason: 'bad_cursor', field: 'cursor' } });
  });

  it('400 bad_cursor for a cursor of another list, or naming an impossible instant', async () => {
    const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const id = T.bug!.id;
    for (const c of [
      enc(['board', '2030-03-10T20:00:00.000000', id]),
      enc(['updated', '2030-13-10T20:00:00.000000', id]),
      enc(['updated', '2030-02-30T20:00:00.000000', id]),
      enc(['updated', '2030-03-10T20:00:00.000000', 'x']),
      enc(['updated', '2030-03-10T20:00:00', id]),
      enc(['updated', '2030-03-10T20:00:00.000000', id, 'extra']),
    ]) {
      const res = await list(`cursor=${c}`);
      expect(res.status, c).toBe(400);
      expect(res.body.error.details.reason).toBe('bad_cursor');
    }
  });

  it('400 invalid with unknown_* for ids that name nothing in the workspace', async () => {
    const nobody = '11111111-2222-4333-8444-555555555555';
    const cases: [string, string, string][] = [
      [`stateIds=${wf.states.todo},${nobody}`, 'unknown_state', 'stateIds'],
      [`kindIds=${nobody}`, 'unknown_kind', 'kindIds'],
      [`labelIds=${nobody}`, 'unknown_label', 'labelIds'],
      [`priorityIds=${nobody}`, 'unknown_priority', 'priorityIds'],
      [`projectId=${nobody}`, 'unknown_project', 'projectId'],
      [`billingClientId=${nobody}`, 'unknown_client', 'billingClientId'],
      [`assigneeId=${nobody}`, 'unknown_person', 'assigneeId'],
      [`reporterId=${nobody}`, 'unknown_person', 'reporterId'],
      [`viewerId=${nobody}`, 'unknown_person', 'viewerId'],
    ];
    for (const [query, reason, field] of cases) {
      const res = await list(query);
      expect(res.status, query).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid', details: { reason, field, id: nobody } });
    }
    // ids of another workspace are unknown here too
    const other = await makeWorkspace(app.db.sql);
    const otherWf = await workflowIds(app.db.sql, other);
    const res = await list(`stateIds=${otherWf.states.todo}`);
    expect(res.body.error.details).toMatchObject({ reason: 'unknown_state' });
  });
});
