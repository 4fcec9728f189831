import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../src/core/auth/principal.ts';
import type { TicketPermissions } from '../src/core/access/permissions.ts';
import { assertMayPatch } from '../src/core/tickets/update.ts';
import { login, type CallResult, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makeClient, makeProject, makeTicket, makeToken, makeWorkspace, type Person, type WorkflowIds, type Workspace } from './helpers/factories.ts';
import { ticketWorld } from './tickets-world.ts';

let app: TestApp;
let ws: Workspace;
let wf: WorkflowIds;
let member: Person, limited: Person, clientUser: Person, clientElevated: Person, otherClientElevated: Person;
let acme: { id: string }, other: { id: string };
let project: { id: string; key: string }, otherProject: { id: string };
let token: string;

beforeAll(async () => {
  ({ app, ws, wf, acme, other, member, limited, clientUser, clientElevated, otherClientElevated } = await ticketWorld());
  const sql = app.db.sql;
  project = await makeProject(sql, ws, { billingClientId: acme.id, members: [{ person: member }, { person: limited, access: 'limited' }] });
  otherProject = await makeProject(sql, ws, { billingClientId: other.id });
  token = (await makeToken(sql, ws, member)).token;
});
afterAll(() => app.close());

const url = (ref: string) => `/api/w/${ws.slug}/tickets/${ref}`;
const newTicket = (opts: Parameters<typeof makeTicket>[2] = {}) => makeTicket(app.db.sql, ws, { projectId: project.id, reporterId: member.id, ...opts });

/** Everything a refused PATCH must leave alone: the row, its labels and its timeline. */
async function snapshot(id: string) {
  const sql = app.db.sql;
  const [t] = await sql`select * from tickets where id = ${id}`;
  const labels = await sql`select label_id from ticket_labels where ticket_id = ${id} order by label_id`;
  const [count] = await sql<{ n: number }[]>`select count(*)::int as n from ticket_events where ticket_id = ${id}`;
  return { t, labels, n: count!.n };
}

async function refused(
  id: string,
  body: unknown,
  status: number,
  code: string,
  reason?: string,
  auth: { token?: string; session?: SessionCookie } = { token },
) {
  const before = await snapshot(id);
  const res: CallResult = await app.call('PATCH', url(id), { ...auth, body });
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
  if (reason) expect(res.body.error.details.reason).toBe(reason);
  expect(await snapshot(id)).toEqual(before);
  return res;
}

describe('PATCH /tickets/{ref}: permissions', () => {
  it('404 for an unknown ticket, and for one the caller cannot see', async () => {
    const before = await app.call('PATCH', url(`${project.key}-99999`), { token, body: { title: 'x' } });
    expect(before.status).toBe(404);
    expect((await app.call('PATCH', url(randomUUID()), { token, body: { title: 'x' } })).status).toBe(404);
    const hidden = await makeTicket(app.db.sql, ws, { projectId: otherProject.id });
    const res = await refused(hidden.id, { title: 'x' }, 404, 'not_found');
    expect(res.body.error.details?.reason).toBeUndefined();
  });

  it('400 for a ref over 60 characters', async () => {
    const res = await app.call('PATCH', url('A'.repeat(61)), { token, body: { title: 'x' } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid');
  });

  it('403 forbidden for a limited member (no edit at all), and missing_scope for a read-only token', async () => {
    const t = await newTicket();
    const limitedToken = (await makeToken(app.db.sql, ws, limited)).token;
    await refused(t.id, { title: 'x' }, 403, 'forbidden', undefined, { token: limitedToken });
    await refused(t.id, {}, 403, 'forbidden', undefined, { token: limitedToken });
    const readOnly = (await makeToken(app.db.sql, ws, member, { scopes: ['read'] })).token;
    await refused(t.id, { title: 'x' }, 403, 'forbidden', 'missing_scope', { token: readOnly });
  });

  it('a client user who did not report the ticket may not edit it', async () => {
    const t = await newTicket();
    await app.db.sql`insert into ticket_viewers (ticket_id, identity_id) values (${t.id}, ${clientUser.id})`;
    const session = await login(app, clientUser.email, clientUser.password);
    await refused(t.id, { title: 'x' }, 403, 'forbidden', undefined, { session });
  });

  it('403 field_forbidden (with field) for a client user sending a field outside title, description, dates and state', async () => {
    const t = await newTicket({ reporterId: clientUser.id });
    const clientToken = (await makeToken(app.db.sql, ws, clientUser)).token;
    for (const [field, value] of [
      ['priorityId', wf.priorities.high],
      ['labelIds', []],
      ['estimateMinutes', 10],
    ] as const) {
      const res = await refused(t.id, { title: 'fine', [field]: value }, 403, 'forbidden', 'field_forbidden', { token: clientToken });
      expect(res.body.error.details.field).toBe(field);
    }
  });

  it('403 assign_forbidden, billing_fields_forbidden and kind_forbidden for a client user who may edit the ticket', async () => {
    const t = await newTicket({ reporterId: clientUser.id });
    const clientToken = (await makeToken(app.db.sql, ws, clientUser)).token;
    for (const [field, value, reason] of [
      ['assigneeId', null, 'assign_forbidden'],
      ['billingClientId', acme.id, 'billing_fields_forbidden'],
      ['billingPolicy', 'free', 'billing_fields_forbidden'],
      ['kindId', wf.kinds.bug, 'kind_forbidden'],
    ] as const) {
      const res = await refused(t.id, { title: 'fine', [field]: value }, 403, 'forbidden', reason, { token: clientToken });
      expect(res.body.error.details.field).toBe(field);
    }
  });

  it('403 state_forbidden for a client user moving to a state outside permissions.moveState', async () => {
    const t = await newTicket({ reporterId: clientElevated.id });
    const clientToken = (await makeToken(app.db.sql, ws, clientElevated)).token;
    await refused(t.id, { stateId: wf.states.in_progress }, 403, 'forbidden', 'state_forbidden', { token: clientToken });
    await refused(t.id, { stateId: wf.states.cancelled }, 403, 'forbidden', 'state_forbidden', { token: clientToken });
  });

  it('403 billing_fields_forbidden for a member on an Inbox ticket (may triage, not bill)', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: null });
    for (const [field, value] of [
      ['billingClientId', acme.id],
      ['billingPolicy', 'free'],
      ['billingMode', 'period'],
      ['billingDescription', 'x'],
    ] as const) {
      const res = await refused(t.id, { [field]: value }, 403, 'forbidden', 'billing_fields_forbidden');
      expect(res.body.error.details.field).toBe(field);
    }
    const ok = await app.call('PATCH', url(t.id), { token, body: { title: 'Triaged title' } });
    expect(ok.status).toBe(200);
  });

  it('409 restore_first on an archived ticket', async () => {
    const t = await newTicket({ archived: true });
    await refused(t.id, { title: 'x' }, 409, 'conflict', 'restore_first');
  });

  it('assign_forbidden and kind_forbidden: the check itself, for a workspace user without those rights', () => {
    const principal = { role: 'member' } as Principal;
    const perms = { edit: true, changeAssignee: false, setBilling: true, changeKind: false } as TicketPermissions;
    const open = { archived: false };
    const reason = (input: object) => {
      try {
        assertMayPatch(principal, perms, open, input);
        return 'allowed';
      } catch (e) {
        return (e as { details?: { reason?: string } }).details?.reason;
      }
    };
    expect(reason({ assigneeId: null })).toBe('assign_forbidden');
    expect(reason({ kindId: wf.kinds.bug })).toBe('kind_forbidden');
    expect(reason({ title: 'x' })).toBe('allowed');
  });
});

describe('PATCH /tickets/{ref}: validation', () => {
  it('400 unknown_kind, unknown_state, unknown_priority, unknown_label', async () => {
    const t = await newTicket();
    for (const [field, reason] of [
      ['kindId', 'unknown_kind'],
      ['stateId', 'unknown_state'],
      ['priorityId', 'unknown_priority'],
    ] as const) {
      const res = await refused(t.id, { [field]: randomUUID() }, 400, 'invalid', reason);
      expect(res.body.error.details.field).toBe(field);
    }
    await refused(t.id, { labelIds: [wf.labels.frontend, randomUUID()] }, 400, 'invalid', 'unknown_label');
  });

  it('400 unknown_person and assignee_ineligible', async () => {
    const t = await newTicket();
    await refused(t.id, { assigneeId: randomUUID() }, 400, 'invalid', 'unknown_person');
    await refused(t.id, { assigneeId: clientUser.id }, 400, 'invalid', 'assignee_ineligible');
    await refused(t.id, { assigneeId: otherClientElevated.id }, 400, 'invalid', 'assignee_ineligible');
  });

  it('400 unknown_client and billing_client_scope', async () => {
    const t = await newTicket();
    await refused(t.id, { billingClientId: randomUUID() }, 400, 'invalid', 'unknown_client');
    const ws2 = await makeWorkspace(app.db.sql);
    const foreign = await makeClient(app.db.sql, ws2);
    await refused(t.id, { billingClientId: foreign.id }, 400, 'invalid', 'unknown_client');
    await refused(t.id, { billingClientId: other.id }, 400, 'invalid', 'billing_client_scope');
  });

  it('400 policy_format for a policy that is not paid, free or bank:<uuid>, or is over 60 characters', async () => {
    const t = await newTicket();
    for (const billingPolicy of ['gold', 'bank:', 'bank:not-a-uuid', 'PAID', ' paid', `bank:${randomUUID()}x`, 'p'.repeat(61), 5, true]) {
      const res = await refused(t.id, { billingPolicy }, 400, 'invalid', 'policy_format');
      expect(res.body.error.details.field).toBe('billingPolicy');
    }
  });

  it('400 estimate_format and parent_estimate', async () => {
    const t = await newTicket();
    for (const estimateMinutes of [-5, 2.5, '10', 10_000_001, {}]) {
      await refused(t.id, { estimateMinutes }, 400, 'invalid', 'estimate_format');
    }
    const parent = await newTicket();
    await newTicket({ parentId: parent.id });
    const res = await refused(parent.id, { estimateMinutes: 30 }, 400, 'invalid', 'parent_estimate');
    expect(res.body.error.details.field).toBe('estimateMinutes');
  });

  it('400 validation for wrong types and out-of-range values of every field', async () => {
    const t = await newTicket();
    const cases: Record<string, unknown>[] = [
      { title: '' },
      { title: '   ' },
      { title: 't'.repeat(201) },
      { title: null },
      { title: 12 },
      { description: 'd'.repeat(50_001) },
      { description: null },
      { description: ['x'] },
      { kindId: 'bug' },
      { kindId: null },
      { stateId: 'done' },
      { priorityId: 3 },
      { assigneeId: 'someone' },
      { labelIds: 'frontend' },
      { labelIds: [1] },
      { labelIds: Array.from({ length: 21 }, () => randomUUID()) },
      { labelIds: null },
      { startDate: '2024-13-01' },
      { dueDate: '31/12/2024' },
      { dueDate: 20240101 },
      { billingClientId: 'acme' },
      { billingMode: 'monthly' },
      { billingMode: 1 },
      { billingDescription: 'd'.repeat(501) },
      { billingDescription: 5 },
    ];
    for (const body of cases) {
      const res = await refused(t.id, body, 400, 'invalid');
      expect(res.body.error.details.reason, JSON.stringify(body).slice(0, 80)).toBe('validation');
    }
  });

  it('400 bad_json and 415 for a body that is not JSON', async () => {
    const t = await newTicket();
    const before = await snapshot(t.id);
    const broken = await app.call('PATCH', url(t.id), { token, rawBody: '{"title":', headers: { 'content-type': 'application/json' } });
    expect(broken.status).toBe(400);
    expect(broken.body.error.details.reason).toBe('bad_json');
    const text = await app.call('PATCH', url(t.id), { token, rawBody: 'title', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
    expect(await snapshot(t.id)).toEqual(before);
  });
});
