import { runOp } from '../src/core/operation.ts';
import { randomUUID } from 'node:crypto';
import { getRun, listRunEntries, listRuns } from '../src/core/billing/list.ts';
import { startRun } from '../src/core/billing/start.ts';
import { voidRun } from '../src/core/billing/void.ts';
import { approveRun } from '../src/core/billing/approve.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACTIONS, actions, type Action, type BooleanPermission, type Requirement } from '../src/core/access/actions.ts';
import type { SubjectPermission } from '../src/core/access/permissions.ts';
import { authorize } from '../src/core/access/authorize.ts';
import { downloadAttachment } from '../src/core/attachments/download.ts';
import { uploadAttachment } from '../src/core/attachments/upload.ts';
import { createToken, listTokens, revokeToken } from '../src/core/auth/tokens.ts';
import type { Principal, Role, Scope } from '../src/core/auth/principal.ts';
import { getBankBalances } from '../src/core/banks/balances.ts';
import { createBank, depositToBank, listBanks, listClientBanks } from '../src/core/banks/manage.ts';
import { getBoard } from '../src/core/board/board.ts';
import { getBoardColumn } from '../src/core/board/column.ts';
import { getMyWork } from '../src/core/board/my.ts';
import { listChanges } from '../src/core/changes/feed.ts';
import { addCodehostLink } from '../src/core/codehost/add.ts';
import { listCodehostLinks } from '../src/core/codehost/list.ts';
import { removeCodehostLink } from '../src/core/codehost/remove.ts';
import { deleteComment, editComment, editCommentByName } from '../src/core/comments/change.ts';
import { createComment, createCommentByName } from '../src/core/comments/create.ts';
import { listComments } from '../src/core/comments/list.ts';
import { getContextPack } from '../src/core/context/pack.ts';
import type { Ctx } from '../src/core/ctx.ts';
import { downloadDocument } from '../src/core/documents/download.ts';
import { listDocumentGrants, setDocumentGrant } from '../src/core/documents/grants.ts';
import { listDocuments } from '../src/core/documents/list.ts';
import { listDownloadableDocuments } from '../src/core/documents/resources.ts';
import { listIntakeMessages } from '../src/core/mail/intake/log.ts';
import { requestPoll } from '../src/core/mail/intake/schedule.ts';
import { deleteMailbox, getMailbox, setMailbox } from '../src/core/mail/intake/settings.ts';
import { createOutboundGuard } from '../src/core/net/outbound.ts';
import { resendDelivery } from '../src/core/documents/resend.ts';
import { isAppError } from '../src/core/errors.ts';
import { addLink } from '../src/core/links/add.ts';
import { removeLink } from '../src/core/links/remove.ts';
import { closePeriod, listPeriods, openPeriod, reopenPeriod } from '../src/core/periods/manage.ts';
import { archiveTicket } from '../src/core/tickets/archive.ts';
import { createTicket } from '../src/core/tickets/create.ts';
import { deleteTicket } from '../src/core/tickets/delete.ts';
import { readTicketPage } from '../src/core/tickets/read.ts';
import { listTickets } from '../src/core/tickets/list.ts';
import { moveTicket } from '../src/core/tickets/move.ts';
import { setParent } from '../src/core/tickets/parent.ts';
import { redactTicket } from '../src/core/tickets/redact.ts';
import { updateTicket } from '../src/core/tickets/update.ts';
import { createCategory, listCategories, setProjectCategory } from '../src/core/time/categories.ts';
import { correctTime } from '../src/core/time/correct.ts';
import { deleteTime } from '../src/core/time/delete.ts';
import { editTime } from '../src/core/time/edit.ts';
import { listTime } from '../src/core/time/list.ts';
import { logTime } from '../src/core/time/log.ts';
import { updateMemberSettings } from '../src/core/time/member-settings.ts';
import { reattributeTicketTime } from '../src/core/time/reattribute.ts';
import { addViewers } from '../src/core/viewers/add.ts';
import { previewVisibility } from '../src/core/viewers/preview.ts';
import { removeViewer } from '../src/core/viewers/remove.ts';
import { getWorkflow } from '../src/core/workflow/get.ts';
import { createKind, deleteKind, updateKind } from '../src/core/workflow/kinds.ts';
import { createLabel, deleteLabel, updateLabel } from '../src/core/workflow/labels.ts';
import { createPriority, deletePriority, updatePriority } from '../src/core/workflow/priorities.ts';
import { createState, deleteState, updateState } from '../src/core/workflow/states.ts';
import { listPeople } from '../src/core/people/list.ts';
import { listProjects } from '../src/core/projects/list.ts';
import { archiveProject } from '../src/core/projects/archive.ts';
import { createProject } from '../src/core/projects/create.ts';
import { getProject } from '../src/core/projects/get.ts';
import { listProjectMembers, removeProjectMember, setProjectMember } from '../src/core/projects/members.ts';
import { updateProject } from '../src/core/projects/update.ts';
import { archiveClient } from '../src/core/clients/archive.ts';
import { createClient } from '../src/core/clients/create.ts';
import { getClient } from '../src/core/clients/get.ts';
import { listClients } from '../src/core/clients/list.ts';
import { listRecipients, setRecipients } from '../src/core/clients/recipients.ts';
import { listRates } from '../src/core/rates/list.ts';
import { replaceRates } from '../src/core/rates/replace.ts';
import { updateClient } from '../src/core/clients/update.ts';
import { deleteCategory, renameCategory } from '../src/core/time/categories-admin.ts';
import type { Db } from '../src/db/connect.ts';
import { opsVoidRun } from '../src/core/ops/billing.ts';
import { setBillingOperator } from '../src/core/ops/operators.ts';
import { changeRole } from '../src/core/people/role.ts';
import { deactivateMember, reactivateMember } from '../src/core/people/deactivate.ts';
import { listInvitations } from '../src/core/people/invitations.ts';
import { createInvitation } from '../src/core/people/invite.ts';
import { resendInvitation } from '../src/core/people/resend-invitation.ts';
import { revokeInvitation } from '../src/core/people/revoke-invitation.ts';
import { getSettings, updateSettings } from '../src/core/workspaces/settings.ts';
import { retryJob } from '../src/core/ops/job-actions.ts';
import { queueCounts } from '../src/core/ops/jobs.ts';
import { testDb, type TestDb } from './helpers/db.ts';
import {
  addViewers as makeViewers,
  makeClient,
  makeComment,
  makeProject,
  makeTicket,
  makeUser,
  makeWorkspace,
  workflowIds,
  type Person,
  type Workspace,
} from './helpers/factories.ts';
import type { TicketFacts, ProjectFacts } from '../src/core/access/facts.ts';

/**
 * Every action of the core's table (src/core/access/actions.ts), called through its core
 * operation with no HTTP in between: for each requirement the action has, a caller lacking just
 * that gets the 403 and reason REST gives (missing_scope with the scope, session_required,
 * workspace_users_only, reauth_required, admin_only, and the ticket permission's reason).
 */

const NOW = new Date('2026-03-10T12:00:00.000Z');
const ALL_SCOPES: Scope[] = ['read', 'write', 'triage', 'admin'];

interface World {
  sql: Db;
  ws: Workspace;
  owner: Person;
  member: Person;
  limited: Person;
  outsider: Person;
  client: Person;
  clientId: string;
  ticket: { id: string; humanId: string };
  other: { id: string; humanId: string };
  projectId: string;
  /** A project nobody is a member of. */
  elsewhereId: string;
  /** A client comment on `ticket` by the client user. */
  clientComment: { id: string };
  stateId: string;
}

let db: TestDb;
let w: World;

beforeAll(async () => {
  db = await testDb();
  const sql = db.sql;
  const ws = await makeWorkspace(sql);
  const c = await makeClient(sql, ws);
  const owner = await makeUser(sql, ws, { role: 'owner' });
  const member = await makeUser(sql, ws, { role: 'member' });
  const limited = await makeUser(sql, ws, { role: 'member' });
  const outsider = await makeUser(sql, ws, { role: 'member' });
  const client = await makeUser(sql, ws, { role: 'client', clientId: c.id });
  const project = await makeProject(sql, ws, {
    billingClientId: c.id,
    members: [{ person: member }, { person: limited, access: 'limited' }],
  });
  const ticket = await makeTicket(sql, ws, { projectId: project.id, reporterId: owner.id });
  // viewers see the ticket without being project members: they lack addViewers (ordinary client) and logTime (staff)
  await makeViewers(sql, ticket.id, [client.id, outsider.id]);
  const other = await makeTicket(sql, ws, { projectId: project.id, reporterId: owner.id });
  const elsewhere = await makeProject(sql, ws, {});
  const clientComment = await makeComment(sql, ws, { ticketId: ticket.id, body: 'mine', audience: 'client', authorId: client.id });
  const wf = await workflowIds(sql, ws);
  w = {
    sql,
    ws,
    owner,
    member,
    limited,
    outsider,
    client,
    clientId: c.id,
    ticket,
    other,
    projectId: project.id,
    elsewhereId: elsewhere.id,
    clientComment,
    stateId: Object.values(wf.states)[0]!,
  };
}, 60_000);
afterAll(() => db?.close());

interface As {
  via?: 'token' | 'session';
  scopes?: Scope[];
  reauthed?: boolean;
  /** A token's project allow-list. */
  projectIds?: string[];
}

function ctxOf(person: Person, as: As = {}): Ctx {
  const via = as.via ?? 'session';
  const principal: Principal = {
    workspaceId: w.ws.id,
    slug: w.ws.slug,
    identityId: person.id,
    name: person.email,
    role: person.role,
    clientId: person === w.client ? w.clientId : null,
    via,
    scopes: new Set(as.scopes ?? ALL_SCOPES),
    projectIds: as.projectIds ?? null,
    tokenId: via === 'token' ? randomUUID() : null,
    tokenKind: via === 'token' ? 'delegated' : null,
    sessionId: via === 'session' ? randomUUID() : null,
    reauthAt: as.reauthed ? new Date(NOW.getTime() - 60_000) : null,
    source: via === 'token' ? 'api' : 'ui',
    door: 'rest',
  };
  return { sql: w.sql, principal, now: () => NOW };
}

/** Each action's core operation, called with inputs valid enough to reach its ticket checks. */
const OPS: Record<Action, (ctx: Ctx) => Promise<unknown>> = {
  'workflow.read': (ctx) => runOp(getWorkflow, ctx, {}),
  'workflow.states.create': (ctx) => runOp(createState, ctx, { key: 'probe', name: 'Probe', category: 'open' }),
  'workflow.states.update': (ctx) => runOp(updateState, ctx, { id: randomUUID(), name: 'Probe' }),
  'workflow.states.delete': (ctx) => runOp(deleteState, ctx, { id: randomUUID() }),
  'workflow.kinds.create': (ctx) => runOp(createKind, ctx, { key: 'probe', name: 'Probe' }),
  'workflow.kinds.update': (ctx) => runOp(updateKind, ctx, { id: randomUUID(), name: 'Probe' }),
  'workflow.kinds.delete': (ctx) => runOp(deleteKind, ctx, { id: randomUUID() }),
  'workflow.priorities.create': (ctx) => runOp(createPriority, ctx, { key: 'probe', name: 'Probe' }),
  'workflow.priorities.update': (ctx) => runOp(updatePriority, ctx, { id: randomUUID(), name: 'Probe' }),
  'workflow.priorities.delete': (ctx) => runOp(deletePriority, ctx, { id: randomUUID() }),
  'workflow.labels.create': (ctx) => runOp(createLabel, ctx, { name: 'probe' }),
  'workflow.labels.update': (ctx) => runOp(updateLabel, ctx, { id: randomUUID(), name: 'Probe' }),
  'workflow.labels.delete': (ctx) => runOp(deleteLabel, ctx, { id: randomUUID() }),
  'projects.list': (ctx) => runOp(listProjects, ctx, {}),
  'projects.read': (ctx) => runOp(getProject, ctx, { id: w.projectId }),
  'projects.create': (ctx) => runOp(createProject, ctx, { key: 'PROBE', name: 'Probe' }),
  'projects.update': (ctx) => runOp(updateProject, ctx, { id: w.projectId }),
  'projects.archive': (ctx) => runOp(archiveProject, ctx, { id: w.projectId, archived: false }),
  'projects.members.list': (ctx) => runOp(listProjectMembers, ctx, { id: w.projectId }),
  'projects.members.set': (ctx) => runOp(setProjectMember, ctx, { id: w.projectId, identityId: w.member.id, access: 'full' }),
  'projects.members.remove': (ctx) => runOp(removeProjectMember, ctx, { id: w.projectId, identityId: randomUUID() }),
  'clients.list': (ctx) => runOp(listClients, ctx, {}),
  'clients.read': (ctx) => runOp(getClient, ctx, { id: w.clientId }),
  'clients.create': (ctx) => runOp(createClient, ctx, { name: 'Probe', code: 'PROBE' }),
  'clients.update': (ctx) => runOp(updateClient, ctx, { id: w.clientId }),
  'clients.archive': (ctx) => runOp(archiveClient, ctx, { id: w.clientId, archived: false }),
  'clients.recipients.list': (ctx) => runOp(listRecipients, ctx, { id: w.clientId }),
  'clients.recipients.set': (ctx) => runOp(setRecipients, ctx, { id: randomUUID(), recipients: [] }),
  'rates.list': (ctx) => runOp(listRates, ctx, {}),
  'rates.replace': (ctx) => runOp(replaceRates, ctx, { rates: [] }),
  'people.list': (ctx) => runOp(listPeople, ctx, {}),
  'billing.runs.create': (ctx) => runOp(startRun, ctx, { periodId: randomUUID() }),
  'billing.runs.list': (ctx) => runOp(listRuns, ctx, {}),
  'billing.runs.read': (ctx) => Promise.all([runOp(getRun, ctx, { id: randomUUID() }), runOp(listRunEntries, ctx, { id: randomUUID() })]),
  'billing.runs.void': (ctx) => runOp(voidRun, ctx, { id: randomUUID(), reason: 'probe' }),
  'billing.runs.approve': (ctx) => runOp(approveRun, ctx, { id: randomUUID() }),
  'tickets.list': (ctx) => runOp(listTickets, ctx, {}),
  'tickets.read': (ctx) => runOp(readTicketPage, ctx, { ref: w.ticket.humanId }),
  'tickets.create': (ctx) => runOp(createTicket, ctx, { projectId: w.projectId, title: 'x' }),
  'tickets.update': (ctx) => runOp(updateTicket, ctx, { ref: w.ticket.humanId, title: 'x' }),
  'tickets.move': (ctx) => runOp(moveTicket, ctx, { ref: w.ticket.humanId, projectId: w.projectId }),
  'tickets.archive': (ctx) => runOp(archiveTicket, ctx, { ref: w.ticket.humanId, archived: false }),
  'tickets.delete': (ctx) => runOp(deleteTicket, ctx, { ref: w.ticket.humanId }),
  'tickets.redact': (ctx) => runOp(redactTicket, ctx, { id: w.ticket.id, reason: 'probe' }),
  'tickets.parent': (ctx) => runOp(setParent, ctx, { ref: w.ticket.humanId, parentId: null }),
  'links.add': (ctx) => runOp(addLink, ctx, { ref: w.ticket.humanId, targetId: w.other.id, kind: 'relates' }),
  'links.remove': (ctx) => runOp(removeLink, ctx, { ref: w.ticket.humanId, linkId: randomUUID() }),
  'codehost.add': (ctx) => runOp(addCodehostLink, ctx, { ref: w.ticket.humanId, repo: 'acme/web', pr: 1, url: 'https://github.com/acme/web/pull/1' }),
  'codehost.remove': (ctx) => runOp(removeCodehostLink, ctx, { ref: w.ticket.humanId, linkId: randomUUID() }),
  'codehost.list': (ctx) => runOp(listCodehostLinks, ctx, {}),
  'viewers.add': (ctx) => runOp(addViewers, ctx, { ref: w.ticket.humanId, identityIds: [w.member.id] }),
  // inputs of the subject rules name what the `lacking` person may not: another viewer, the internal audience
  'viewers.remove': (ctx) => runOp(removeViewer, ctx, { ref: w.ticket.humanId, identityId: w.outsider.id }),
  'viewers.preview': (ctx) => runOp(previewVisibility, ctx, { ref: w.ticket.humanId, audience: 'internal', mentions: [] }),
  'comments.list': (ctx) => runOp(listComments, ctx, { ref: w.ticket.humanId }),
  'comments.create': (ctx) => runOp(createComment, ctx, { ref: w.ticket.humanId, body: 'x', audience: 'internal' }),
  'comments.edit': (ctx) => runOp(editComment, ctx, { ref: w.ticket.humanId, commentId: w.clientComment.id, body: 'x', audience: 'internal' }),
  'comments.delete': (ctx) => runOp(deleteComment, ctx, { ref: w.ticket.humanId, commentId: randomUUID() }),
  'attachments.upload': (ctx) =>
    runOp(uploadAttachment, ctx, {
      ref: w.ticket.humanId,
      file: { filename: 'a.txt', contentType: 'text/plain', data: Buffer.from('a') },
      audience: 'internal',
    }),
  'attachments.download': (ctx) => runOp(downloadAttachment, ctx, { attachmentId: randomUUID() }),
  'board.read': (ctx) => Promise.all([runOp(getBoard, ctx, {}), runOp(getBoardColumn, ctx, { stateId: w.stateId })]),
  'mywork.read': (ctx) => runOp(getMyWork, ctx, {}),
  'changes.list': (ctx) => runOp(listChanges, ctx, {}),
  'documents.list': (ctx) => Promise.all([runOp(listDocuments, ctx, {}), runOp(listDownloadableDocuments, ctx, {})]),
  'documents.download': (ctx) => runOp(downloadDocument, ctx, { id: randomUUID() }),
  'documents.grants.list': (ctx) => runOp(listDocumentGrants, ctx, { id: w.clientId }),
  'documents.grants.set': (ctx) => runOp(setDocumentGrant, ctx, { id: w.clientId, identityId: w.member.id, granted: false }),
  'documents.resend': (ctx) => runOp(resendDelivery, ctx, { id: randomUUID(), deliveryId: randomUUID() }),
  'banks.list': (ctx) => Promise.all([runOp(listBanks, ctx, {}), runOp(listClientBanks, ctx, { id: w.clientId })]),
  'banks.create': (ctx) => runOp(createBank, ctx, { clientId: w.clientId, name: 'probe' }),
  'banks.deposit': (ctx) => runOp(depositToBank, ctx, { id: randomUUID(), minutes: 60, depositedOn: '2026-03-10' }),
  'banks.balances': (ctx) => runOp(getBankBalances, ctx, {}),
  'context.pack': (ctx) => runOp(getContextPack, ctx, {}),
  'time.list': (ctx) => runOp(listTime, ctx, { from: '2026-03-09', to: '2026-03-15' }),
  'time.log': (ctx) => runOp(logTime, ctx, { ticketId: w.ticket.id, spentOn: '2026-03-10', minutes: 5 }),
  'time.edit': (ctx) => runOp(editTime, ctx, { id: randomUUID(), minutes: 5 }),
  'time.delete': (ctx) => runOp(deleteTime, ctx, { id: randomUUID() }),
  'time.correct': (ctx) => runOp(correctTime, ctx, { id: randomUUID(), minutes: 5 }),
  'time.reattribute': (ctx) => runOp(reattributeTicketTime, ctx, { id: w.ticket.id }),
  'periods.list': (ctx) => runOp(listPeriods, ctx, {}),
  'periods.open': (ctx) => runOp(openPeriod, ctx, {}),
  'periods.close': (ctx) => runOp(closePeriod, ctx, { id: randomUUID() }),
  'periods.reopen': (ctx) => runOp(reopenPeriod, ctx, { id: randomUUID() }),
  'categories.list': (ctx) => runOp(listCategories, ctx, {}),
  'categories.create': (ctx) => runOp(createCategory, ctx, { name: 'probe' }),
  'categories.update': (ctx) => runOp(renameCategory, ctx, { id: randomUUID(), name: 'probe' }),
  'categories.delete': (ctx) => runOp(deleteCategory, ctx, { id: randomUUID() }),
  'categories.assign': (ctx) => runOp(setProjectCategory, ctx, { projectId: w.projectId, identityId: w.member.id, categoryId: null }),
  'members.update': (ctx) => runOp(updateMemberSettings, ctx, { identityId: w.member.id }),
  'mailbox.read': (ctx) => runOp(getMailbox, ctx, {}),
  'mailbox.write': (ctx) =>
    Promise.all([
      runOp(
        setMailbox,
        { ...ctx, mailbox: { secrets: null, outbound: createOutboundGuard({ allowLoopback: false }) } },
        { host: 'imap.example.test', port: 993, secure: true, user: 'probe' },
      ),
      runOp(deleteMailbox, ctx, {}),
    ]),
  'mailbox.poll': (ctx) => runOp(requestPoll, ctx, {}),
  'mailbox.messages': (ctx) => runOp(listIntakeMessages, ctx, {}),
  'ops.read': (ctx) => runOp(queueCounts, ctx, {}),
  'ops.act': (ctx) => runOp(retryJob, ctx, { jobId: '1' }),
  'ops.destroy': (ctx) => runOp(opsVoidRun, ctx, { runId: randomUUID(), reason: 'probe' }),
  'members.role': (ctx) => runOp(changeRole, ctx, { identityId: w.member.id, role: 'member' }),
  'members.deactivate': (ctx) => runOp(deactivateMember, ctx, { identityId: randomUUID() }),
  'members.reactivate': (ctx) => runOp(reactivateMember, ctx, { identityId: randomUUID() }),
  'invitations.list': (ctx) => runOp(listInvitations, ctx, {}),
  'invitations.create': (ctx) => runOp(createInvitation, ctx, { email: 'probe@example.test', name: 'Probe', role: 'member' }),
  'invitations.resend': (ctx) => runOp(resendInvitation, ctx, { id: randomUUID() }),
  'invitations.revoke': (ctx) => runOp(revokeInvitation, ctx, { id: randomUUID() }),
  'settings.read': (ctx) => runOp(getSettings, ctx, {}),
  'settings.update': (ctx) => runOp(updateSettings, ctx, {}),
  'ops.operators.set': (ctx) => runOp(setBillingOperator, ctx, { identityId: w.member.id, billingOperator: false }),
  'tokens.list': (ctx) => runOp(listTokens, ctx, {}),
  'tokens.create': (ctx) => runOp(createToken, ctx, { name: 'probe', scopes: ['read'] }),
  'tokens.revoke': (ctx) => runOp(revokeToken, ctx, { id: randomUUID() }),
};

/** Who may see the ticket yet lacks one of its permissions (with the input of OPS), by the permission. */
const lacking: Record<BooleanPermission | SubjectPermission, () => Person> = {
  edit: () => w.limited,
  archive: () => w.limited,
  addViewers: () => w.client,
  logTime: () => w.outsider,
  changeAssignee: () => w.limited,
  setBilling: () => w.limited,
  changeKind: () => w.limited,
  move: () => w.limited,
  seeInternalFigures: () => w.client,
  writeAudience: () => w.client,
  removeViewer: () => w.client,
};

interface Case {
  lacks: string;
  ctx: () => Ctx;
  reason: string;
  details?: Record<string, unknown>;
}

/** One case per requirement of the action: a caller lacking just that. */
function casesOf(r: Requirement): Case[] {
  const out: Case[] = [];
  if (r.scope) {
    const scope = r.scope;
    out.push({
      lacks: `the ${scope} scope`,
      ctx: () => ctxOf(w.owner, { via: 'token', scopes: ALL_SCOPES.filter((s) => s !== scope) }),
      reason: 'missing_scope',
      details: { scope },
    });
  }
  if (r.session || r.reauth) out.push({ lacks: 'a session', ctx: () => ctxOf(w.owner, { via: 'token' }), reason: 'session_required' });
  if (r.staff) out.push({ lacks: 'a workspace role', ctx: () => ctxOf(w.client), reason: 'workspace_users_only' });
  if (r.reauth) out.push({ lacks: 'a recent re-authentication', ctx: () => ctxOf(w.owner), reason: 'reauth_required' });
  if (r.admin || r.reauth) out.push({ lacks: 'the Owner/Admin role', ctx: () => ctxOf(w.member, { reauthed: true }), reason: 'admin_only' });
  const rule = r.ticket;
  if (typeof rule === 'object') out.push({ lacks: `permissions.${rule.allows}`, ctx: () => ctxOf(lacking[rule.allows]()), reason: rule.reason });
  if (typeof rule === 'object' && rule.clients) {
    out.push({ lacks: `permissions.${rule.allows}, as a client user`, ctx: () => ctxOf(w.client), reason: rule.clients.reason });
  }
  return out;
}

async function refusal(run: () => Promise<unknown>): Promise<{ status: number; code: string; details: Record<string, unknown> } | 'allowed'> {
  try {
    await run();
    return 'allowed';
  } catch (e) {
    if (!isAppError(e)) throw e;
    return { status: e.status, code: e.code, details: e.details ?? {} };
  }
}

it('every action has a core operation to call and at least one requirement', () => {
  expect(Object.keys(OPS).sort()).toEqual([...actions].sort());
  const without = actions.filter((a) => casesOf(ACTIONS[a]).length === 0);
  expect(without, 'actions with no requirement: give them one or a case here').toEqual([]);
});

describe.each(actions.map((a) => [a] as const))('%s', (action) => {
  it.each(casesOf(ACTIONS[action]).map((c) => [c.lacks, c] as const))('without %s: 403, as REST', async (_lacks, c) => {
    const got = await refusal(() => OPS[action](c.ctx()));
    expect(got).toMatchObject({ status: 403, code: 'forbidden', details: { reason: c.reason, ...c.details } });
  });
});

describe('authorize itself', () => {
  it('lets an Owner with a freshly re-authenticated session do everything a session may', () => {
    for (const action of actions) expect(() => authorize(ctxOf(w.owner, { reauthed: true }), action), action).not.toThrow();
  });

  it('a role check waits for the ticket: without it, an action on a ticket checks only the credential', () => {
    expect(() => authorize(ctxOf(w.member), 'tickets.delete')).not.toThrow();
    expect(() => authorize(ctxOf(w.member, { via: 'token' }), 'tickets.delete')).toThrow(expect.objectContaining({ reason: 'session_required' }));
  });

  it.each<[Role, boolean]>([
    ['owner', true],
    ['member', false],
  ])('categories.create for %s: allowed = %s', (role, allowed) => {
    const person = role === 'owner' ? w.owner : w.member;
    const run = () => authorize(ctxOf(person), 'categories.create');
    if (allowed) expect(run).not.toThrow();
    else expect(run).toThrow(expect.objectContaining({ reason: 'admin_only' }));
  });
});

describe('placement: where a ticket may be put (the `into` rule of tickets.create and tickets.move)', () => {
  interface PlacementCase {
    name: string;
    run: () => Promise<unknown>;
    reason: string;
    /** Read when the case runs (the world is built in beforeAll). */
    details?: () => Record<string, unknown>;
  }
  const inbox = { projectId: null, title: 'x' };
  const cases: PlacementCase[] = [
    { name: 'a client user into the Inbox', run: () => runOp(createTicket, ctxOf(w.client), inbox), reason: 'inbox_forbidden' },
    {
      name: 'an allow-listed token into the Inbox',
      run: () => runOp(createTicket, ctxOf(w.owner, { via: 'token', projectIds: [w.projectId] }), inbox),
      reason: 'project_not_allowed',
    },
    {
      name: 'a token without triage into the Inbox',
      run: () => runOp(createTicket, ctxOf(w.owner, { via: 'token', scopes: ['read', 'write'] }), inbox),
      reason: 'missing_scope',
      details: () => ({ scope: 'triage' }),
    },
    {
      name: 'an allow-listed token into another project',
      run: () => runOp(createTicket, ctxOf(w.owner, { via: 'token', projectIds: [w.elsewhereId] }), { projectId: w.projectId, title: 'x' }),
      reason: 'project_not_allowed',
      details: () => ({ projectId: w.projectId }),
    },
    {
      name: 'a limited member into their project',
      run: () => runOp(createTicket, ctxOf(w.limited), { projectId: w.projectId, title: 'x' }),
      reason: 'project_membership',
      details: () => ({ projectId: w.projectId }),
    },
    {
      name: 'a full member moving into a project they are not a member of',
      run: () => runOp(moveTicket, ctxOf(w.member), { ref: w.ticket.humanId, projectId: w.elsewhereId }),
      reason: 'project_membership',
      details: () => ({ projectId: w.elsewhereId }),
    },
    {
      name: 'an allow-listed token moving out of its projects',
      run: () => runOp(moveTicket, ctxOf(w.owner, { via: 'token', projectIds: [w.projectId] }), { ref: w.ticket.humanId, projectId: w.elsewhereId }),
      reason: 'project_not_allowed',
      details: () => ({ projectId: w.elsewhereId }),
    },
    {
      name: 'a limited member moving out of their project (the ticket rule: project_membership of the source)',
      run: () => runOp(moveTicket, ctxOf(w.limited), { ref: w.ticket.humanId, projectId: w.elsewhereId }),
      reason: 'project_membership',
      details: () => ({ projectId: w.projectId }),
    },
    {
      name: 'a client user moving a ticket they see (the ticket rule for clients)',
      run: () => runOp(moveTicket, ctxOf(w.client), { ref: w.ticket.humanId, projectId: w.projectId }),
      reason: 'move_forbidden',
    },
  ];

  it.each(cases.map((c) => [c.name, c] as const))('%s: 403, as REST', async (_name, c) => {
    expect(await refusal(c.run)).toMatchObject({ status: 403, code: 'forbidden', details: { reason: c.reason, ...c.details?.() } });
  });

  const project = (access: ProjectFacts['access']): ProjectFacts => ({
    id: w.elsewhereId,
    key: 'ELSE',
    billingClientId: null,
    access,
    clientOnProject: false,
    archived: false,
  });
  const facts = (projectId: string | null) =>
    ({
      id: randomUUID(),
      projectId,
      memberAccess: projectId ? 'full' : null,
      reporterId: w.owner.id,
      clientOnProject: false,
      stateIds: [],
      defaultStateId: w.stateId,
      customerResolveStateId: null,
    }) as unknown as TicketFacts;

  it('routing a ticket out of the Inbox (triage) needs no membership of the target; moving out of a project does', () => {
    const member = ctxOf(w.member);
    expect(() => authorize(member, 'tickets.move', facts(null), { into: project(null) })).not.toThrow();
    expect(() => authorize(member, 'tickets.move', facts(w.projectId), { into: project(null) })).toThrow(
      expect.objectContaining({ details: { reason: 'project_membership', projectId: w.elsewhereId } }),
    );
    expect(() => authorize(member, 'tickets.move', facts(w.projectId), { into: project('full') })).not.toThrow();
  });

  it('the placement waits for the target: without it, the credential alone is checked', () => {
    expect(() => authorize(ctxOf(w.client), 'tickets.create')).not.toThrow();
    expect(() => authorize(ctxOf(w.client), 'tickets.create', null, { into: null })).toThrow(expect.objectContaining({ reason: 'inbox_forbidden' }));
  });
});

describe('subject rules: what the action names decides', () => {
  it('a viewer may remove themselves; a client user may not remove another viewer; the reporter is never removable', async () => {
    expect(await refusal(() => runOp(removeViewer, ctxOf(w.client), { ref: w.ticket.humanId, identityId: w.owner.id }))).toMatchObject({
      status: 403,
      details: { reason: 'reporter_not_removable' },
    });
    expect(await refusal(() => runOp(removeViewer, ctxOf(w.client), { ref: w.ticket.humanId, identityId: w.outsider.id }))).toMatchObject({
      status: 403,
      details: { reason: 'remove_viewer_forbidden', identityId: w.outsider.id },
    });
  });

  it('the audience rule names the audience refused, for comments and the visibility preview alike', async () => {
    const expected = { status: 403, details: { reason: 'audience_forbidden', field: 'audience', audience: 'internal' } };
    expect(await refusal(() => runOp(createComment, ctxOf(w.client), { ref: w.ticket.humanId, body: 'x', audience: 'internal' }))).toMatchObject(expected);
    expect(await refusal(() => runOp(previewVisibility, ctxOf(w.client), { ref: w.ticket.humanId, audience: 'internal' }))).toMatchObject(expected);
  });

  it('a comment id is checked before the mentions (a bad id and a bad name: the id is reported)', async () => {
    const bad = { ref: w.ticket.humanId, body: 'x', mentions: ['nobody at all'] };
    expect(await refusal(() => runOp(editCommentByName, ctxOf(w.member), { ...bad, commentId: 'not-a-uuid' }))).toMatchObject({
      status: 400,
      details: { reason: 'bad_uuid', field: 'commentId' },
    });
    expect(await refusal(() => runOp(editCommentByName, ctxOf(w.member), { ...bad, commentId: randomUUID() }))).toMatchObject({
      status: 404,
      details: { reason: 'unknown_comment' },
    });
    expect(await refusal(() => runOp(createCommentByName, ctxOf(w.member), { ...bad, ref: 'NOPE-1' }))).toMatchObject({ status: 404 });
    expect(await refusal(() => runOp(createCommentByName, ctxOf(w.member), bad))).toMatchObject({
      status: 400,
      details: { reason: 'unknown_person', field: 'mentions.0' },
    });
  });
});
