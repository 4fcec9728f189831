import { z } from 'zod';
import type { Ctx } from '../../core/ctx.ts';
import { resolvePersonId } from '../../core/resolve/people.ts';
import { resolveProjectRef } from '../../core/resolve/project-names.ts';
import { resolveClientId } from '../../core/resolve/projects.ts';
import { resolveTicketUuid } from '../../core/resolve/tickets.ts';
import { resolveLabelIds, resolveWorkflowId } from '../../core/resolve/workflow.ts';
import { createTicket } from '../../core/tickets/create.ts';
import { moveTicket } from '../../core/tickets/move.ts';
import { billingDescriptionField, descriptionField, MAX_LABELS, titleField } from '../../core/tickets/schemas.ts';
import { updateTicket } from '../../core/tickets/update.ts';
import { dateArg, defined, personArg, projectArg, ticketArg } from '../args.ts';
import { compact, compactTicket, ticketDone } from '../shapes.ts';
import { defineTool, type Surface } from '../tool.ts';

/** Core error fields -> argument names of the ticket write tools. */
const FIELDS: Record<string, string> = {
  ref: 'ticket',
  projectId: 'project',
  kindId: 'kind',
  stateId: 'state',
  priorityId: 'priority',
  assigneeId: 'assignee',
  billingClientId: 'billingClient',
  labelIds: 'labels',
  parentId: 'parent',
};

const fieldArgs = {
  title: titleField.describe('Ticket title.'),
  description: descriptionField.describe('Markdown.'),
  kind: z.string().describe('Kind: id, key or name.'),
  state: z.string().describe('State: id, key or name.'),
  priority: z.string().describe('Priority: id, key or name.'),
  assignee: personArg('Assignee (null: none)').nullable(),
  billingClient: z.string().nullable().describe('Billed client: id, code or name; null: internal.'),
  labels: z.array(z.string()).max(MAX_LABELS).describe('Labels (id or name); replaces the set.'),
  startDate: dateArg('Start date').nullable(),
  dueDate: dateArg('Due date').nullable(),
  estimateMinutes: z.number().nullable().describe('Whole minutes >= 0; leaf tickets only.'),
};

type FieldArgs = Partial<{
  kind: string;
  state: string;
  priority: string;
  assignee: string | null;
  billingClient: string | null;
  labels: string[];
}>;

/** The named fields as the ids the core takes; absent stays absent, null stays null. */
async function fieldIds(ctx: Ctx, a: FieldArgs) {
  const [kindId, stateId, priorityId, assigneeId, billingClientId, labelIds] = await Promise.all([
    a.kind === undefined ? undefined : resolveWorkflowId(ctx, 'kinds', a.kind, 'kind'),
    a.state === undefined ? undefined : resolveWorkflowId(ctx, 'states', a.state, 'state'),
    a.priority === undefined ? undefined : resolveWorkflowId(ctx, 'priorities', a.priority, 'priority'),
    a.assignee === undefined || a.assignee === null ? a.assignee : resolvePersonId(ctx, a.assignee, 'assignee'),
    a.billingClient === undefined || a.billingClient === null ? a.billingClient : resolveClientId(ctx, a.billingClient, 'billingClient'),
    a.labels === undefined ? undefined : resolveLabelIds(ctx, a.labels, 'labels'),
  ]);
  return { kindId, stateId, priorityId, assigneeId, billingClientId, labelIds };
}

function createInput(s: Surface) {
  const project = projectArg(s, 'Project');
  return z.object({
    project: s.inbox ? project.nullable().describe('Project: key (WEB), name or id; null: the Inbox.') : project,
    title: fieldArgs.title,
    description: fieldArgs.description.optional(),
    kind: fieldArgs.kind.optional(),
    state: fieldArgs.state.optional(),
    priority: fieldArgs.priority.optional(),
    assignee: fieldArgs.assignee.optional(),
    billingClient: fieldArgs.billingClient.optional(),
    labels: fieldArgs.labels.optional(),
    startDate: fieldArgs.startDate.optional(),
    dueDate: fieldArgs.dueDate.optional(),
    estimateMinutes: fieldArgs.estimateMinutes.optional(),
    parent: ticketArg('Parent ticket').nullable().optional(),
  });
}

export const createTicketTool = defineTool({
  name: 'create_ticket',
  title: 'Create ticket',
  description:
    'Start a ticket in a project (you become its reporter). Omitted kind, state and priority take the workspace defaults. Returns the new ticket summary.',
  toolset: 'tickets',
  op: createTicket,
  input: createInput,
  output: compactTicket,
  fields: FIELDS,
  args: async (ctx, a) => {
    const [projectId, parentId, ids] = await Promise.all([
      a.project === null ? null : resolveProjectRef(ctx, a.project, 'project'),
      a.parent === undefined || a.parent === null ? a.parent : resolveTicketUuid(ctx, a.parent, 'parent'),
      fieldIds(ctx, a),
    ]);
    return defined({
      projectId,
      title: a.title,
      description: a.description,
      ...ids,
      startDate: a.startDate,
      dueDate: a.dueDate,
      estimateMinutes: a.estimateMinutes,
      parentId,
    });
  },
  result: compact,
  text: ticketDone('Created'),
});

export const updateTicketTool = defineTool({
  name: 'update_ticket',
  title: 'Update ticket',
  description:
    'Change fields of a ticket; send only what changes (labels replaces the set, null clears). Moving to another state is `state`. Billing fields need billing rights. Returns the updated summary.',
  toolset: 'tickets',
  op: updateTicket,
  input: () =>
    z.object({
      ticket: ticketArg(),
      title: fieldArgs.title.optional(),
      description: fieldArgs.description.optional(),
      kind: fieldArgs.kind.optional(),
      state: fieldArgs.state.optional(),
      priority: fieldArgs.priority.optional(),
      assignee: fieldArgs.assignee.optional(),
      labels: fieldArgs.labels.optional(),
      startDate: fieldArgs.startDate.optional(),
      dueDate: fieldArgs.dueDate.optional(),
      estimateMinutes: fieldArgs.estimateMinutes.optional(),
      billingClient: fieldArgs.billingClient.optional(),
      billingPolicy: z.string().nullable().optional().describe('"paid", "free" or "bank:<bankId>"; null inherits.'),
      billingMode: z.enum(['period', 'on_close']).nullable().optional().describe('null inherits.'),
      billingDescription: billingDescriptionField.optional().describe('Text the client reads on the timesheet.'),
    }),
  output: compactTicket,
  fields: FIELDS,
  args: async (ctx, a) => {
    const body = defined({
      title: a.title,
      description: a.description,
      ...(await fieldIds(ctx, a)),
      startDate: a.startDate,
      dueDate: a.dueDate,
      estimateMinutes: a.estimateMinutes,
      billingPolicy: a.billingPolicy,
      billingMode: a.billingMode,
      billingDescription: a.billingDescription,
    });
    return { ...body, ref: a.ticket };
  },
  result: compact,
  text: ticketDone('Updated'),
});

export const moveTicketTool = defineTool({
  name: 'move_ticket',
  title: 'Move ticket',
  description:
    'Move a ticket to another project, or route it out of the Inbox. It gets a new human id (old ones keep working). A billing-client reset needs an owner/admin with confirmReset.',
  toolset: 'tickets',
  op: moveTicket,
  input: (s) =>
    z.object({
      ticket: ticketArg(),
      project: projectArg(s, 'Target project'),
      billingClient: fieldArgs.billingClient.optional(),
      kind: fieldArgs.kind.optional(),
      assignee: fieldArgs.assignee.optional(),
      confirmReset: z.boolean().optional().describe('Owner/admin: accept the billing client being reset.'),
    }),
  output: compactTicket,
  fields: FIELDS,
  args: async (ctx, a) => {
    const [projectId, ids] = await Promise.all([resolveProjectRef(ctx, a.project, 'project'), fieldIds(ctx, a)]);
    const body = defined({
      projectId,
      billingClientId: ids.billingClientId,
      kindId: ids.kindId,
      assigneeId: ids.assigneeId,
      confirmReset: a.confirmReset,
    });
    return { ...body, ref: a.ticket };
  },
  result: compact,
  text: ticketDone('Moved, now'),
});
