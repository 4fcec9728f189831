import { randomUUID } from 'node:crypto';
import { authorize } from '../access/authorize.ts';
import { isClientRole } from '../auth/principal.ts';
import { tx, type Ctx } from '../ctx.ts';
import { forbidden, notFound } from '../errors.ts';
import { lockTicketGraph } from '../links/graph-lock.ts';
import { holdTickets } from './concurrency.ts';
import { storedHtml } from './markdown.ts';
import { recordEvents, type NewEvent } from './events.ts';
import { checkAssignee, checkBillingClient, checkLabels, loadProject, resolveWorkflow } from './fields.ts';
import { isVisible } from './load.ts';
import { recordNumber, takeNumber } from './numbering.ts';
import { checkParentChain, clearParentEstimate } from './parent.ts';
import { CLIENT_EDITABLE_FIELDS } from '../access/permissions.ts';
import { defineOp } from '../operation.ts';
import { settledLater } from '../settled-later.ts';
import { createTicketInput, type CreateTicketInput } from './schemas.ts';
import { getTicketSummary, type TicketSummary } from './summary.ts';
import { ticketSummarySchema } from './summary-schema.ts';

/**
 * POST /tickets. Who may start a ticket where is the `into` rule of `tickets.create`
 * (src/core/access/placement.ts), checked inside the transaction once the project is loaded:
 * - Inbox (projectId null): workspace users; a token needs `triage` and no project allow-list.
 * - A project: Owner/Admin any; other workspace users as full members; client users in the
 *   projects their client bills or collaborates on (startedBy `client`; others are 404 `unknown_project`).
 * Client users may not assign, set billing, or set fields outside CLIENT_EDITABLE_FIELDS.
 * The summary is read after the transaction commits (its own tx, not the operation's: the
 * insert's locks are not held while the summary is built).
 */
export const createTicket = defineOp({
  name: 'tickets.create',
  action: 'tickets.create',
  input: createTicketInput,
  output: ticketSummarySchema,
  run: async (ctx, input): Promise<TicketSummary> => {
    const p = ctx.principal;
    // Every refusal comes before the number is taken, so a refused request changes nothing. The
    // number is taken on its own (see takeNumber): under 200 concurrent clients, creators waited
    // 761 ms on average for the project's counter row when it stayed locked for the whole creating
    // transaction. The transaction checks everything again, with its locks, before it writes.
    await checkCreate(ctx, input);
    const number = await takeNumber(ctx.sql, p.workspaceId, input.projectId);
    const id = await tx(ctx, async (ctx) => {
      const { sql } = ctx;
      const now = ctx.now();
      const ticketId = randomUUID();
      const { project, wf, labelIds } = await checkCreate(ctx, input, ticketId);
      const billingClientId = input.billingClientId === undefined ? (project?.billingClientId ?? null) : input.billingClientId;
      // The writes go out together (one round trip; the connection runs them in the order they are
      // started: a postgres.js query starts when awaited, hence `execute()`). The new
      // row's updated_at is what recordEvents' touch would make it (greatest(now, now + 1 ms)),
      // so the events skip that UPDATE of a row this transaction just wrote.
      const touchedAt = new Date(now.getTime() + 1);
      const description = input.description ?? '';
      const html = storedHtml(description);
      const writes: Promise<unknown>[] = [
        recordNumber(sql, p.workspaceId, input.projectId, number, ticketId),
        sql`
      insert into tickets (id, workspace_id, project_id, number, title, description, description_html, description_html_version,
                           kind_id, state_id, priority_id, assignee_id, reporter_id,
                           billing_client_id, estimate_minutes, start_date, due_date, parent_id, source, started_by, closed_at, created_at, updated_at)
      values (${ticketId}, ${p.workspaceId}, ${input.projectId}, ${number}, ${input.title}, ${description}, ${html.html}, ${html.version}, ${wf.kindId}, ${wf.stateId},
              ${wf.priorityId}, ${input.assigneeId ?? null}, ${p.identityId}, ${billingClientId}, ${input.estimateMinutes ?? null},
              ${input.startDate ?? null}::date, ${input.dueDate ?? null}::date, ${input.parentId ?? null}, ${p.source}, ${isClientRole(p.role) ? 'client' : 'workspace'},
              ${wf.stateCategory === 'closed' ? now : null}, ${now}, ${touchedAt})`.execute(),
      ];
      if (labelIds.length > 0) {
        writes.push(sql`insert into ticket_labels (ticket_id, label_id) select ${ticketId}, unnest(${labelIds}::uuid[])`.execute());
      }
      const events: NewEvent[] = [{ workspaceId: p.workspaceId, ticketId, kind: 'created', actorId: p.identityId }];
      if (input.parentId) {
        await Promise.all(writes.splice(0));
        events.push(...(await clearParentEstimate(sql, p, input.parentId)));
      }
      writes.push(recordEvents(sql, events, now, { touched: [ticketId] }));
      await Promise.all(writes);
      return ticketId;
    });
    const summary = await getTicketSummary(ctx, id);
    // The caller is the reporter, and every creator may see what they reported.
    if (!summary) throw new Error(`created ticket ${id} is not visible to its reporter`);
    return summary;
  },
});

/**
 * Every rule a new ticket must pass. Run twice: first without a transaction (so a refusal
 * happens before a number is taken), then inside the creating transaction with `ticketId`,
 * where the parent graph and the parent are locked, so what was checked still holds at commit.
 */
async function checkCreate(ctx: Ctx, input: CreateTicketInput, ticketId?: string) {
  const { sql } = ctx;
  const p = ctx.principal;
  const client = isClientRole(p.role);
  // The lookups are independent: sent together (one round trip inside the transaction), their
  // refusals still come in the order below.
  const projectRead = settledLater(input.projectId === null ? Promise.resolve(null) : loadProject(sql, p, input.projectId));
  const wfRead = settledLater(resolveWorkflow(sql, p.workspaceId, input));
  const labelsRead = settledLater(checkLabels(sql, p.workspaceId, input.labelIds ?? []));
  const assigneeRead = settledLater(input.assigneeId ? checkAssignee(sql, p.workspaceId, input.assigneeId, input.projectId) : Promise.resolve());
  const billingRead = settledLater(input.billingClientId ? checkBillingClient(sql, p.workspaceId, input.billingClientId, input.projectId) : Promise.resolve());
  const project = await projectRead;
  authorize(ctx, 'tickets.create', null, { into: project });
  if (client) assertClientFields(input);
  const wf = await wfRead;
  if (client && input.stateId && !wf.stateClientAllowed)
    throw forbidden('state_forbidden', { field: 'stateId' }, 'Client users may not start a ticket in this state.');
  const labelIds = await labelsRead;
  await assigneeRead;
  await billingRead;
  const locking = ticketId !== undefined;
  if (input.parentId && locking) await lockTicketGraph(sql, p.workspaceId, 'parents');
  if (input.parentId) {
    if (!(await isVisible(ctx, input.parentId))) throw notFound(undefined, { field: 'parentId' }, 'No such parent ticket.');
    if (locking) await holdTickets(sql, [input.parentId]);
    await checkParentChain(sql, ticketId ?? randomUUID(), input.parentId);
  }
  return { project, wf, labelIds };
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
