import { z } from 'zod';
import { dateSchema, MAX_DATE, MIN_DATE } from '../input.ts';
import { idField, UUID_SOURCE, withReasons } from '../validation.ts';

/**
 * Input schemas of the ticket write operations, shared by REST and the MCP tools. An operation's
 * input is one object: the ticket `ref` (REST: the path), the request's fields (REST: the body) and
 * what REST reads from headers (`ifMatch`). Unknown fields are stripped (zod's default), so a
 * client may send back what it read.
 */

/** A ticket `{ref}`: a UUID or a human id (PREFIX-N); loadTicket reads it (over 60 characters: 400 `ref_too_long`). */
export const ticketRef = z.string().describe('The ticket: its UUID or human id (PREFIX-N).');
const byRef = { ref: ticketRef };

/** Fields whose malformed value has its own reason in the contract instead of the generic `validation`. */
const FORMAT_REASONS = { estimateMinutes: 'estimate_format', billingPolicy: 'policy_format' };

/** Upper bound of an estimate: keeps the value inside PostgreSQL's integer and sane (about 19 years of minutes). */
export const MAX_ESTIMATE_MINUTES = 10_000_000;
export const REDACTED = '[redacted]';

const id = (what: string) => z.uuid().toLowerCase().describe(what);

export const titleField = z.string().trim().min(1).max(200).describe('Ticket title, 1-200 characters after trimming whitespace.');
export const descriptionField = z.string().max(50_000).describe('Ticket description in Markdown, at most 50,000 characters.');
export const kindIdField = id('Ticket kind id from GET /workflow (kinds).');
export const stateIdField = id('Workflow state id from GET /workflow (states).');
export const priorityIdField = id('Priority id from GET /workflow (priorities).');
export const assigneeIdField = id('Identity id of the assignee: a workspace user, or an elevated client user on the ticket project.').nullable();
export const billingClientIdField = id(
  'Client billed for the work: the project billing client or a collaborating client; null means internal work.',
).nullable();
/** Labels one ticket may carry. */
export const MAX_LABELS = 20;
export const labelIdsField = z
  .array(z.uuid().toLowerCase())
  .max(MAX_LABELS)
  .describe(`Label ids from GET /workflow (labels), at most ${MAX_LABELS}; replaces the whole set.`);
const dateField = (what: string) => dateSchema.nullable().describe(`${what} as YYYY-MM-DD (${MIN_DATE} to ${MAX_DATE}), or null.`);
export const startDateField = dateField('Start date');
export const dueDateField = dateField('Due date');
export const estimateMinutesField = z
  .number()
  .int()
  .min(0)
  .max(MAX_ESTIMATE_MINUTES)
  .nullable()
  .describe('Estimate in whole minutes (>= 0), or null. Only leaf tickets carry an estimate; a parent sums its children.');

/** `paid`, `free`, or `bank:<uuid>` (a prepaid time bank of the client). */
export const BILLING_POLICY = new RegExp(`^(paid|free|bank:${UUID_SOURCE})$`);
export const billingPolicyField = z
  .string()
  .max(60)
  .regex(BILLING_POLICY)
  .nullable()
  .describe('How the work is billed: "paid", "free" or "bank:<bankId>"; null inherits from the project.');
export const billingModeField = z
  .enum(['period', 'on_close'])
  .nullable()
  .describe('When the work is billed: "period" (each closed period) or "on_close" (when the ticket closes); null inherits.');
export const billingDescriptionField = z
  .string()
  .max(500)
  .nullable()
  .describe('Text the client reads on the timesheet for this ticket, at most 500 characters.');

export const createTicketInput = withReasons(
  z.object({
    projectId: id('Project id, or null to put the ticket in the Inbox (a token needs the triage scope for that).').nullable(),
    title: titleField,
    description: descriptionField.optional(),
    kindId: kindIdField.optional().describe('Ticket kind id; default: the inbound kind.'),
    stateId: stateIdField.optional().describe('Workflow state id; default: the default (reopen-target) state.'),
    priorityId: priorityIdField.optional().describe('Priority id; default: the workspace default priority.'),
    assigneeId: assigneeIdField.optional(),
    billingClientId: billingClientIdField.optional().describe('Billing client; default: the project billing client. Workspace users only.'),
    labelIds: labelIdsField.optional(),
    startDate: startDateField.optional(),
    dueDate: dueDateField.optional(),
    estimateMinutes: estimateMinutesField.optional(),
    parentId: id('Parent ticket id (UUID of a ticket you can see), or null.').nullable().optional(),
  }),
  FORMAT_REASONS,
);
export type CreateTicketInput = z.output<typeof createTicketInput>;

/** PATCH /tickets/{ref}'s body: the fields to change. */
export const updateTicketFields = z.object({
  title: titleField.optional(),
  description: descriptionField.optional(),
  kindId: kindIdField.optional(),
  stateId: stateIdField.optional().describe('Target workflow state; must be one of permissions.moveState.'),
  priorityId: priorityIdField.optional(),
  assigneeId: assigneeIdField.optional(),
  labelIds: labelIdsField.optional(),
  startDate: startDateField.optional(),
  dueDate: dueDateField.optional(),
  billingClientId: billingClientIdField.optional(),
  billingPolicy: billingPolicyField.optional(),
  billingMode: billingModeField.optional(),
  billingDescription: billingDescriptionField.optional(),
  estimateMinutes: estimateMinutesField.optional(),
});
export type UpdateTicketFields = z.output<typeof updateTicketFields>;

export const updateTicketInput = withReasons(
  updateTicketFields.extend({
    ...byRef,
    ifMatch: z.string().nullish().describe('The ETag the change is based on (REST: If-Match); a stale one is 412.'),
  }),
  FORMAT_REASONS,
);

/** POST /tickets/{ref}/move's body. */
export const moveTicketFields = z.object({
  projectId: id('Target project id.'),
  billingClientId: billingClientIdField.optional().describe('Billing client in the target project (set it when routing out of the Inbox).'),
  kindId: kindIdField.optional(),
  assigneeId: assigneeIdField.optional(),
  confirmReset: z.boolean().optional().describe('Owner/Admin: confirm that the billing client is reset because it is not valid in the target project.'),
});
export type MoveTicketFields = z.output<typeof moveTicketFields>;
export const moveTicketInput = moveTicketFields.extend(byRef);

/** POST /tickets/{ref}/archive's body. */
export const archiveTicketFields = z.object({
  archived: z.boolean().describe('true archives the ticket (off boards), false restores it.'),
});
export const archiveTicketInput = archiveTicketFields.extend(byRef);

export const deleteTicketInput = z.object(byRef);

export const redactTicketFields = z.object({
  reason: z.string().trim().min(3).max(500).describe('Why the ticket is redacted, 3-500 characters; kept on the timeline.'),
});
/** Redaction names the ticket by UUID only, never by a human id that could be reused. */
export const redactTicketInput = withReasons(redactTicketFields.extend({ id: idField('The ticket UUID.') }), { id: 'bad_uuid' });
