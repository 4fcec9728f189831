import { authorize } from '../access/authorize.ts';
import { defineOp } from '../operation.ts';
import { isClientRole, type Principal } from '../auth/principal.ts';
import { tx, type Ctx } from '../ctx.ts';
import { conflict, forbidden, invalid } from '../errors.ts';
import { assertIfMatch } from './concurrency.ts';
import { recordEvents, type NewEvent } from './events.ts';
import { checkAssignee, checkBillingBank, checkBillingClient, checkLabels, resolveWorkflow } from './fields.ts';
import { getTicketPage, type TicketPage } from './get.ts';
import { loadTicket } from './load.ts';
import { CLIENT_EDITABLE_FIELDS, type TicketPermissions } from '../access/permissions.ts';
import { storedHtml } from './markdown.ts';
import { ticketPageSchema } from './page-schema.ts';
import { updateTicketInput, type UpdateTicketFields } from './schemas.ts';
import type { TicketFacts } from '../access/facts.ts';

type Field = keyof UpdateTicketFields;
type ScalarField = Exclude<Field, 'labelIds'>;

/** API field -> tickets column, for every scalar field PATCH may change. */
const COLUMNS: Record<ScalarField, string> = {
  title: 'title',
  description: 'description',
  kindId: 'kind_id',
  stateId: 'state_id',
  priorityId: 'priority_id',
  assigneeId: 'assignee_id',
  startDate: 'start_date',
  dueDate: 'due_date',
  billingClientId: 'billing_client_id',
  billingPolicy: 'billing_policy',
  billingMode: 'billing_mode',
  billingDescription: 'billing_description',
  estimateMinutes: 'estimate_minutes',
};
const BILLING_FIELDS: Field[] = ['billingClientId', 'billingPolicy', 'billingMode', 'billingDescription'];

/**
 * PATCH /tickets/{ref}: changes only the fields sent, each checked against the ticket's
 * permissions; one `field_changed` event per field whose value really changes. With `ifMatch`
 * (REST: the If-Match header) a stale version is refused with 412.
 * open -> closed sets closedAt; closed -> open keeps it (it is the last close).
 * The page is built after the transaction commits, so the ticket's row lock is not held meanwhile.
 */
export const updateTicket = defineOp({
  name: 'tickets.update',
  action: 'tickets.update',
  input: updateTicketInput,
  output: ticketPageSchema,
  run: async (ctx, { ref, ifMatch, ...input }): Promise<TicketPage> => {
    const id = await tx(ctx, async (ctx) => {
      const { sql, principal: p } = ctx;
      const t = await loadTicket(ctx, ref, { lock: true });
      assertIfMatch(t, ifMatch);
      const perms = authorize(ctx, 'tickets.update', t);
      assertMayPatch(p, perms, t, input);
      const current = await loadCurrent(ctx, t);
      const newCategory = await validate(ctx, t, input, perms);

      const now = ctx.now();
      const set: Record<string, unknown> = {};
      const events: NewEvent[] = [];
      const changed = (field: Field, oldValue: unknown, newValue: unknown) =>
        events.push({
          workspaceId: t.workspaceId,
          ticketId: t.id,
          kind: 'field_changed',
          actorId: p.identityId,
          payload: { field, old: oldValue, new: newValue },
        });

      for (const field of Object.keys(COLUMNS) as ScalarField[]) {
        const next = input[field];
        if (next === undefined || next === current[field]) continue;
        set[COLUMNS[field]] = next;
        changed(field, current[field], next);
      }
      if (set.description !== undefined) {
        const html = storedHtml(set.description as string);
        Object.assign(set, { description_html: html.html, description_html_version: html.version });
      }
      if (input.stateId && input.stateId !== t.stateId && t.stateCategory === 'open' && newCategory === 'closed') set.closed_at = now;
      if (Object.keys(set).length > 0) await sql`update tickets set ${sql(set)} where id = ${t.id}`;

      if (input.labelIds) {
        const next = [...new Set(input.labelIds)].sort();
        if (next.join() !== current.labelIds.join()) {
          await sql`delete from ticket_labels where ticket_id = ${t.id}`;
          if (next.length > 0) await sql`insert into ticket_labels (ticket_id, label_id) select ${t.id}, unnest(${next}::uuid[])`;
          changed('labelIds', current.labelIds, next);
        }
      }
      await recordEvents(sql, events, now);
      return t.id;
    });
    return getTicketPage(ctx, id);
  },
});

/**
 * Permission of every sent field, before any value is looked at (no edit at all is the action's
 * 403 `edit_forbidden`, see authorize): an archived ticket is 409 `restore_first`; assignee, billing and kind each have their own reason;
 * any other field outside CLIENT_EDITABLE_FIELDS, sent by a client user, is `field_forbidden`.
 */
export function assertMayPatch(p: Principal, perms: TicketPermissions, t: Pick<TicketFacts, 'archived'>, input: UpdateTicketFields): void {
  if (t.archived) throw conflict('restore_first', undefined, 'The ticket is archived; restore it first.');
  const sent = (Object.keys(input) as Field[]).filter((f) => input[f] !== undefined);
  // The specific reasons first (assignee, billing, kind), then field_forbidden for any other field a client may not change.
  if (sent.includes('assigneeId') && !perms.changeAssignee) throw forbidden('assign_forbidden', { field: 'assigneeId' }, 'You may not change the assignee.');
  const billing = sent.find((f) => BILLING_FIELDS.includes(f));
  if (billing && !perms.setBilling) throw forbidden('billing_fields_forbidden', { field: billing }, 'You may not change billing fields.');
  if (sent.includes('kindId') && !perms.changeKind) throw forbidden('kind_forbidden', { field: 'kindId' }, 'You may not change the kind.');
  if (isClientRole(p.role)) {
    const field = sent.find((f) => !CLIENT_EDITABLE_FIELDS.has(f));
    if (field) throw forbidden('field_forbidden', { field }, `You may not change ${field}.`);
  }
}

/** Values of the sent fields: ids must exist, people be eligible, clients be in scope. Returns the new state's category. */
async function validate(ctx: Ctx, t: TicketFacts, input: UpdateTicketFields, perms: TicketPermissions): Promise<'open' | 'closed'> {
  const { sql } = ctx;
  const ws = t.workspaceId;
  const wf = input.kindId || input.stateId || input.priorityId ? await resolveWorkflow(sql, ws, input) : null;
  if (input.stateId && !perms.moveState.includes(input.stateId)) {
    throw forbidden('state_forbidden', { field: 'stateId' }, 'You may not move this ticket to that state.');
  }
  if (input.labelIds) await checkLabels(sql, ws, input.labelIds);
  if (input.assigneeId) await checkAssignee(sql, ws, input.assigneeId, t.projectId, t.assigneeId);
  if (input.billingClientId) await checkBillingClient(sql, ws, input.billingClientId, t.projectId, 'unknown_client');
  if (input.billingPolicy)
    await checkBillingBank(sql, ws, input.billingPolicy, input.billingClientId !== undefined ? input.billingClientId : t.billingClientId);
  if (input.estimateMinutes !== undefined && input.estimateMinutes !== null && t.hasChildren) {
    throw invalid('parent_estimate', { field: 'estimateMinutes' }, "A parent ticket's estimate is the sum of its children.");
  }
  return input.stateId && wf ? wf.stateCategory : t.stateCategory;
}

type Current = { [F in ScalarField]: unknown } & { labelIds: string[] };

/** The ticket's present values of every PATCH field, in the API's shapes (dates as YYYY-MM-DD). */
async function loadCurrent(ctx: Ctx, t: TicketFacts): Promise<Current> {
  const [row] = await ctx.sql<Current[]>`
    select title, description, kind_id as "kindId", state_id as "stateId", priority_id as "priorityId", assignee_id as "assigneeId",
           start_date::text as "startDate", due_date::text as "dueDate", billing_client_id as "billingClientId",
           billing_policy as "billingPolicy", billing_mode as "billingMode", billing_description as "billingDescription",
           estimate_minutes as "estimateMinutes",
           array(select tl.label_id::text from ticket_labels tl where tl.ticket_id = t.id) as "labelIds"
    from tickets t where t.id = ${t.id}`;
  row!.labelIds.sort();
  return row!;
}
