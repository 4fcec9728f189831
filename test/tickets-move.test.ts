import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, type CallResult, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makeProject, makeTicket, makeToken, makeWorkspace, type Person, type WorkflowIds, type Workspace } from './helpers/factories.ts';
import { ticketWorld } from './tickets-world.ts';

let app: TestApp;
let ws: Workspace;
let wf: WorkflowIds;
let owner: Person, member: Person, limited: Person, clientElevated: Person, otherClientElevated: Person;
let acme: { id: string }, collab: { id: string }, other: { id: string };
/** P: billed to Acme, Collab collaborates. Q: billed to Other. R: Acme, member not in it. S: billed to Collab. */
let P: { id: string; key: string }, Q: { id: string; key: string }, R: { id: string; key: string }, S: { id: string; key: string };
let memberToken: string, ownerToken: string;

beforeAll(async () => {
  ({ app, ws, wf, acme, collab, other, owner, member, limited, clientElevated, otherClientElevated } = await ticketWorld());
  const sql = app.db.sql;
  P = await makeProject(sql, ws, {
    billingClientId: acme.id,
    collaboratorIds: [collab.id],
    members: [{ person: member }, { person: limited, access: 'limited' }],
  });
  Q = await makeProject(sql, ws, { billingClientId: other.id, members: [{ person: member }, { person: limited }] });
  R = await makeProject(sql, ws, { billingClientId: acme.id });
  S = await makeProject(sql, ws, { billingClientId: collab.id, members: [{ person: member }] });
  memberToken = (await makeToken(sql, ws, member)).token;
  ownerToken = (await makeToken(sql, ws, owner)).token;
});
afterAll(() => app.close());

type Auth = { token?: string; session?: SessionCookie };
const move = (ref: string, body: unknown, auth: Auth = { token: memberToken }) => app.call('POST', `/api/w/${ws.slug}/tickets/${ref}/move`, { ...auth, body });
const get = (ref: string, auth: Auth = { token: ownerToken }) => app.call('GET', `/api/w/${ws.slug}/tickets/${ref}`, auth);
const row = async (id: string) => (await app.db.sql`select * from tickets where id = ${id}`)[0]!;

async function snapshot(id: string) {
  const sql = app.db.sql;
  const [t] = await sql`select * from tickets where id = ${id}`;
  const refs = await sql`select project_id, number from ticket_refs where ticket_id = ${id} order by number`;
  const [count] = await sql<{ n: number }[]>`select count(*)::int as n from ticket_events where ticket_id = ${id}`;
  return { t, refs, n: count!.n };
}

async function refused(id: string, body: unknown, status: number, code: string, reason?: string, auth?: Auth): Promise<CallResult> {
  const before = await snapshot(id);
  const res = await move(id, body, auth);
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
  if (reason) expect(res.body.error.details.reason).toBe(reason);
  expect(await snapshot(id)).toEqual(before);
  return res;
}

describe('POST /tickets/{ref}/move between projects', () => {
  it('moves a ticket: new number in the target, the old human id keeps resolving, a moved event, 200 TicketPage', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: P.id, reporterId: owner.id, billingClientId: collab.id });
    await app.db.sql`insert into ticket_viewers (ticket_id, identity_id) values (${t.id}, ${clientElevated.id})`;
    await app.db.sql`insert into comments (workspace_id, ticket_id, author_id, audience, body) values (${ws.id}, ${t.id}, ${member.id}, 'internal', 'kept')`;
    const res = await move(t.humanId, { projectId: S.id, unknownField: 1 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ id: t.id, project: { id: S.id, key: S.key }, humanId: expect.stringMatching(new RegExp(`^${S.key}-\\d+$`)) });
    expect(res.body.billingClient).toEqual({ id: collab.id, name: 'Collab' });
    expect(res.headers.get('etag')).toBeTruthy();
    expect((await get(t.humanId)).body.id).toBe(t.id);
    expect((await get(res.body.humanId)).body.id).toBe(t.id);
    const refs = await app.db.sql`select project_id from ticket_refs where ticket_id = ${t.id}`;
    expect(refs.map((r) => r.project_id).sort()).toEqual([P.id, S.id].sort());
    const [moved] = await app.db.sql`select payload, actor_id from ticket_events where ticket_id = ${t.id} and kind = 'moved'`;
    expect(moved!.payload).toEqual({ fromProjectId: P.id, toProjectId: S.id, fromHumanId: t.humanId, toHumanId: res.body.humanId });
    expect(moved!.actor_id).toBe(member.id);
    expect(res.body.viewers.map((v: { identityId: string }) => v.identityId)).toContain(clientElevated.id);
    expect(res.body.comments.map((c: { body: string }) => c.body)).toEqual(['kept']);
  });

  it('moving back gives yet another number; every old number keeps resolving', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: P.id, billingClientId: null });
    const there = await move(t.id, { projectId: S.id });
    const back = await move(t.id, { projectId: P.id });
    expect(back.status).toBe(200);
    expect(back.body.humanId).not.toBe(t.humanId);
    for (const ref of [t.humanId, there.body.humanId, back.body.humanId]) expect((await get(ref)).body.id).toBe(t.id);
  });

  it('moving to the project it is in changes no number and writes no moved event; kind and assignee still apply', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: P.id });
    const res = await move(t.id, { projectId: P.id, kindId: wf.kinds.task, assigneeId: member.id });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ humanId: t.humanId, kind: { id: wf.kinds.task }, assignee: { id: member.id } });
    const kinds = await app.db.sql`select kind from ticket_events where ticket_id = ${t.id} order by created_at`;
    expect(kinds.map((k) => k.kind)).toEqual(['field_changed', 'field_changed']);
  });

  it('sets kind, assignee and billing client on the way', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: S.id, billingClientId: collab.id });
    const res = await move(t.id, { projectId: P.id, kindId: wf.kinds.bug, assigneeId: clientElevated.id, billingClientId: acme.id });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ kind: { id: wf.kinds.bug }, assignee: { id: clientElevated.id }, billingClient: { id: acme.id } });
    const fields = await app.db.sql`select payload->>'field' as f from ticket_events where ticket_id = ${t.id} and kind = 'field_changed'`;
    expect(fields.map((r) => r.f).sort()).toEqual(['assigneeId', 'billingClientId', 'kindId']);
  });

  it('an assignee who cannot work in the target project is unassigned', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: P.id, billingClientId: collab.id, assigneeId: clientElevated.id });
    const res = await move(t.id, { projectId: S.id });
    expect(res.status).toBe(200);
    expect(res.body.assignee).toBeNull();
    const [e] = await app.db.sql`select payload from ticket_events where ticket_id = ${t.id} and kind = 'field_changed'`;
    expect(e!.payload).toEqual({ field: 'assigneeId', old: clientElevated.id, new: null });
  });

  it('billing reset: 409 reset_requires_admin for a member, 409 confirm_reset for an admin without confirmReset', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: P.id, billingClientId: acme.id });
    await refused(t.id, { projectId: Q.id }, 409, 'conflict', 'reset_requires_admin');
    await refused(t.id, { projectId: Q.id, confirmReset: true }, 409, 'conflict', 'reset_requires_admin');
    await refused(t.id, { projectId: Q.id }, 409, 'conflict', 'confirm_reset', { token: ownerToken });
    await refused(t.id, { projectId: Q.id, confirmReset: false }, 409, 'conflict', 'confirm_reset', { token: ownerToken });
    const res = await move(t.id, { projectId: Q.id, confirmReset: true }, { token: ownerToken });
    expect(res.status).toBe(200);
    expect(res.body.billingClient).toEqual({ id: other.id, name: 'Other' });
    const [e] = await app.db.sql`select payload from ticket_events where ticket_id = ${t.id} and kind = 'field_changed'`;
    expect(e!.payload).toEqual({ field: 'billingClientId', old: acme.id, new: other.id });
  });

  it('an admin resetting may name the new billing client (or null)', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: P.id, billingClientId: acme.id });
    const res = await move(t.id, { projectId: Q.id, confirmReset: true, billingClientId: null }, { token: ownerToken });
    expect(res.status).toBe(200);
    expect(res.body.billingClient).toBeNull();
  });

  it('a billing client the target also has needs no reset', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: S.id, billingClientId: collab.id });
    const res = await move(t.id, { projectId: P.id });
    expect(res.status).toBe(200);
    expect(res.body.billingClient.id).toBe(collab.id);
  });

  it('403 unless a full member of both projects (Owner and Admin: any)', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: P.id, billingClientId: null });
    await refused(t.id, { projectId: R.id }, 403, 'forbidden');
    const limitedToken = (await makeToken(app.db.sql, ws, limited)).token;
    await refused(t.id, { projectId: Q.id }, 403, 'forbidden', undefined, { token: limitedToken });
    const ok = await move(t.id, { projectId: R.id }, { token: ownerToken });
    expect(ok.status).toBe(200);
  });

  it('403 for a token restricted to other projects', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: P.id, billingClientId: null });
    const restricted = (await makeToken(app.db.sql, ws, member, { projectIds: [P.id] })).token;
    await refused(t.id, { projectId: S.id }, 403, 'forbidden', undefined, { token: restricted });
    const readOnly = (await makeToken(app.db.sql, ws, member, { scopes: ['read'] })).token;
    await refused(t.id, { projectId: S.id }, 403, 'forbidden', 'missing_scope', { token: readOnly });
  });

  it('403 for a client user, 404 for a ticket the caller cannot see', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: P.id, reporterId: clientElevated.id });
    const clientToken = (await makeToken(app.db.sql, ws, clientElevated)).token;
    await refused(t.id, { projectId: P.id }, 403, 'forbidden', undefined, { token: clientToken });
    const hidden = await makeTicket(app.db.sql, ws, { projectId: R.id });
    await refused(hidden.id, { projectId: P.id }, 404, 'not_found');
    const otherToken = (await makeToken(app.db.sql, ws, otherClientElevated)).token;
    await refused(t.id, { projectId: Q.id }, 404, 'not_found', undefined, { token: otherToken });
  });

  it('404 unknown_project for an unknown target or one of another workspace', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: P.id });
    await refused(t.id, { projectId: randomUUID() }, 404, 'not_found', 'unknown_project');
    const ws2 = await makeWorkspace(app.db.sql);
    const foreign = await makeProject(app.db.sql, ws2);
    await refused(t.id, { projectId: foreign.id }, 404, 'not_found', 'unknown_project', { token: ownerToken });
  });

  it('409 restore_first for an archived ticket', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: P.id, archived: true, billingClientId: null });
    await refused(t.id, { projectId: S.id }, 409, 'conflict', 'restore_first');
  });

  it('400 billing_client_scope, unknown_kind, unknown_person, assignee_ineligible', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: P.id, billingClientId: null });
    await refused(t.id, { projectId: S.id, billingClientId: acme.id }, 400, 'invalid', 'billing_client_scope');
    await refused(t.id, { projectId: S.id, billingClientId: randomUUID() }, 400, 'invalid', 'billing_client_scope');
    await refused(t.id, { projectId: S.id, kindId: randomUUID() }, 400, 'invalid', 'unknown_kind');
    await refused(t.id, { projectId: S.id, assigneeId: randomUUID() }, 400, 'invalid', 'unknown_person');
    await refused(t.id, { projectId: S.id, assigneeId: clientElevated.id }, 400, 'invalid', 'assignee_ineligible');
  });

  it('400 validation for bad body values', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: P.id });
    for (const body of [
      {},
      { projectId: null },
      { projectId: 'S-1' },
      { projectId: 7 },
      { projectId: S.id, billingClientId: 'acme' },
      { projectId: S.id, kindId: null },
      { projectId: S.id, kindId: 5 },
      { projectId: S.id, assigneeId: 'me' },
      { projectId: S.id, confirmReset: 'yes' },
    ]) {
      const res = await refused(t.id, body, 400, 'invalid');
      expect(res.body.error.details.reason).toBe('validation');
    }
  });
});

describe('POST /tickets/{ref}/move out of the Inbox (triage)', () => {
  it('routes an Inbox ticket into a project with kind, assignee and billing client', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: null, reporterId: member.id });
    const session = await login(app, member.email, member.password);
    const res = await move(t.humanId, { projectId: P.id, kindId: wf.kinds.bug, assigneeId: member.id, billingClientId: collab.id }, { session });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      queue: null,
      project: { id: P.id },
      kind: { id: wf.kinds.bug },
      assignee: { id: member.id },
      billingClient: { id: collab.id },
    });
    expect((await get(t.humanId)).body.id).toBe(t.id);
    const [e] = await app.db.sql`select payload from ticket_events where ticket_id = ${t.id} and kind = 'moved'`;
    expect(e!.payload).toMatchObject({ fromProjectId: null, toProjectId: P.id, fromHumanId: t.humanId });
  });

  it("without a billing client it takes the target project's", async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: null });
    const res = await move(t.id, { projectId: P.id });
    expect(res.status).toBe(200);
    expect(res.body.billingClient).toEqual({ id: acme.id, name: 'Acme' });
    expect((await row(t.id)).billing_client_id).toBe(acme.id);
  });

  it('400 billing_client_scope for a billing client the target does not have', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: null });
    await refused(t.id, { projectId: P.id, billingClientId: other.id }, 400, 'invalid', 'billing_client_scope');
  });

  it('403 missing_scope triage for a token without triage', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: null });
    const noTriage = (await makeToken(app.db.sql, ws, member, { scopes: ['read', 'write'] })).token;
    const res = await refused(t.id, { projectId: P.id }, 403, 'forbidden', 'missing_scope', { token: noTriage });
    expect(res.body.error.details.scope).toBe('triage');
    // a token that could never see the Inbox learns nothing: 404
    const restricted = (await makeToken(app.db.sql, ws, member, { projectIds: [P.id] })).token;
    await refused(t.id, { projectId: P.id }, 404, 'not_found', undefined, { token: restricted });
  });

  it('409 moved_out_of_sight when the caller cannot see the ticket in its new project; the move is committed', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: null, reporterId: owner.id });
    const res = await move(t.id, { projectId: R.id });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'conflict', details: { reason: 'moved_out_of_sight' } });
    expect(await row(t.id)).toMatchObject({ project_id: R.id, billing_client_id: acme.id });
    expect((await get(t.id, { token: memberToken })).status).toBe(404);
  });
});
