import { randomUUID } from 'node:crypto';
import { authorize } from '../access/authorize.ts';
import { requireScope } from '../auth/guards.ts';
import { isClientRole, type Principal } from '../auth/principal.ts';
import { tx, type Ctx } from '../ctx.ts';
import { forbidden, notFound } from '../errors.ts';
import { lockTicketGraph } from '../links/graph-lock.ts';
import { holdTickets } from './concurrency.ts';
import { recordEvents, type NewEvent } from './events.ts';
import { assertFullMember, assertInAllowList, checkAssignee, checkBillingClient, checkLabels, loadProject, resolveWorkflow } from './fields.ts';
import { isVisible } from './load.ts';
import { assignNumber } from './numbering.ts';
import { checkParentChain, clearParentEstimate } from './parent.ts';
import { CLIENT_EDITABLE_FIELDS } from './permissions.ts';
import { createTicketInput, parseTicketInput, type CreateTicketInput } from './schemas.ts';
import { getTicketSummary, type TicketSummary } from './summary.ts';

/**
 * POST /tickets. Who may start a ticket where:
 * - Inbox (projectId null): workspace users; a token needs `triage` and no project allow-list.
 * - A project: Owner/Admin any; other workspace users as full members; client users in the
 *   projects their client bills or collaborates on (startedBy `client`).
 * Client users may not assign, set billing, or set fields outside CLIENT_EDITABLE_FIELDS.
 */
export async function createTicket(ctx: Ctx, raw: unknown): Promise<TicketSummary> {
  authorize(ctx, 'tickets.create');
  const input = parseTicketInput(createTicketInput, raw);
  const p = ctx.principal;
  const project = await authorizeCreate(ctx, input);
  const client = isClientRole(p.role);
  if (client) assertClientFields(input);

  const id = await tx(ctx, async (ctx) => {
    const { sql } = ctx;
    const now = ctx.now();
    if (input.parentId) await lockTicketGraph(sql, p.workspaceId, 'parents');
    const wf = await resolveWorkflow(sql, p.workspaceId, input);
    if (client && input.stateId && !wf.stateClientAllowed)
      throw forbidden('state_forbidden', { field: 'stateId' }, 'Client users may not start a ticket in this state.');
    const labelIds = await checkLabels(sql, p.workspaceId, input.labelIds ?? []);
    if (input.assigneeId) await checkAssignee(sql, p.workspaceId, input.assigneeId, input.projectId);
    if (input.billingClientId) await checkBillingClient(sql, p.workspaceId, input.billingClientId, input.projectId);
    const ticketId = randomUUID();
    if (input.parentId) {
      if (!(await isVisible(ctx, input.parentId))) throw notFound(undefined, { field: 'parentId' }, 'No such parent ticket.');
      await holdTickets(sql, [input.parentId]);
      await checkParentChain(sql, ticketId, input.parentId);
    }

    const number = await assignNumber(sql, p.workspaceId, input.projectId, ticketId);
    const billingClientId = input.billingClientId === undefined ? (project?.billingClientId ?? null) : input.billingClientId;
    await sql`
      insert into tickets (id, workspace_id, project_id, number, title, description, kind_id, state_id, priority_id, assignee_id, reporter_id,
                           billing_client_id, estimate_minutes, start_date, due_date, parent_id, source, started_by, closed_at, created_at, updated_at)
      values (${ticketId}, ${p.workspaceId}, ${input.projectId}, ${number}, ${input.title}, ${input.description ?? ''}, ${wf.kindId}, ${wf.stateId},
              ${wf.priorityId}, ${input.assigneeId ?? null}, ${p.identityId}, ${billingClientId}, ${input.estimateMinutes ?? null},
              ${input.startDate ?? null}::date, ${input.dueDate ?? null}::date, ${input.parentId ?? null}, ${p.source}, ${client ? 'client' : 'workspace'},
              ${wf.stateCategory === 'closed' ? now : null}, ${now}, ${now})`;
    if (labelIds.length > 0) {
      await sql`insert into ticket_labels (ticket_id, label_id) select ${ticketId}, unnest(${labelIds}::uuid[])`;
    }
    const events: NewEvent[] = [{ workspaceId: p.workspaceId, ticketId, kind: 'created', actorId: p.identityId }];
    if (input.parentId) events.push(...(await clearParentEstimate(sql, p, input.parentId)));
    await recordEvents(sql, events, now);
    return ticketId;
  });
  const summary = await getTicketSummary(ctx, id);
  // The caller is the reporter, and every creator may see what they reported.
  if (!summary) throw new Error(`created ticket ${id} is not visible to its reporter`);
  return summary;
}

/** Where the caller may start a ticket; returns the project (null for the Inbox). */
async function authorizeCreate(ctx: Ctx, input: CreateTicketInput) {
  const p = ctx.principal;
  if (input.projectId === null) {
    assertMayUseInbox(p);
    return null;
  }
  const project = await loadProject(ctx.sql, p, input.projectId);
  assertInAllowList(p, project.id);
  if (!isClientRole(p.role)) assertFullMember(p, project);
  return project;
}

function assertMayUseInbox(p: Principal): void {
  if (isClientRole(p.role)) throw forbidden('inbox_forbidden', undefined, 'Client users start tickets in a project of their client.');
  if (p.projectIds) throw forbidden('project_not_allowed', undefined, 'A token restricted to projects cannot use the Inbox.');
  requireScope(p, 'triage');
}

/** Client users: assigning and billing have their own reasons; any other non-client field is `field_forbidden`. */
function assertClientFields(input: CreateTicketInput): void {
  if (input.assigneeId !== undefined) throw forbidden('assign_forbidden', { field: 'assigneeId' }, 'Client users may not assign tickets.');
  if (input.billingClientId !== undefined)
    throw forbidden('billing_fields_forbidden', { field: 'billingClientId' }, 'Client users may not set billing fields.');
  for (const field of ['kindId', 'priorityId', 'labelIds', 'estimateMinutes', 'parentId'] as const) {
    if (input[field] !== undefined && !CLIENT_EDITABLE_FIELDS.has(field)) {
      throw forbidden('field_forbidden', { field }, `Client users may not set ${field}.`);
    }
  }
}
