import { z } from 'zod';
import type { Ctx } from '../../core/ctx.ts';
import { runOp } from '../../core/operation.ts';
import { getWorkflow } from '../../core/workflow/get.ts';
import type { TicketPage } from '../../core/tickets/get.ts';
import type { CommentWindow } from '../../core/tickets/page-sql.ts';
import { readTicketPage, type TicketPageRead } from '../../core/tickets/read.ts';
import { LIST_LIMIT_MAX, listTickets } from '../../core/tickets/list.ts';
import { cursorArg, DEFAULT_PAGE, defined, FILTER_FIELDS, filterArgs, filterQuery, limitArg, ticketArg, type FilterArgs } from '../args.ts';
import { compact, ticketList, ticketListText } from '../shapes.ts';
import { defineTool } from '../tool.ts';

export const searchTicketsTool = defineTool({
  name: 'search_tickets',
  title: 'Search tickets',
  description: `Find tickets by full text and filters (names or ids), most recently updated first. Compact summaries; page with nextCursor (default ${DEFAULT_PAGE}, max ${LIST_LIMIT_MAX}). get_ticket shows one in full.`,
  toolset: 'tickets',
  op: listTickets,
  idempotent: true,
  input: (s) =>
    z.object({
      ...filterArgs(s),
      archived: z.boolean().optional().describe('true: archived tickets only.'),
      cursor: cursorArg,
      limit: limitArg(),
    }),
  output: ticketList,
  fields: FILTER_FIELDS,
  args: async (ctx, a) =>
    defined({
      ...(await filterQuery(ctx, a as FilterArgs)),
      archived: a.archived,
      cursor: a.cursor,
      limit: a.limit,
    }),
  result: (list) => ({ items: list.items.map(compact), nextCursor: list.nextCursor }),
  text: ticketListText,
});

/** Comments shown by default: the latest few, each cut to a readable length (the core cuts them). */
const LATEST_COMMENTS: CommentWindow = { latestComments: 3, commentChars: 500 };

const ref = z.object({ id: z.string(), humanId: z.string(), title: z.string(), state: z.string() });
/** `direction` on duplicates only: outgoing = this ticket duplicates the other. */
const linkRef = ref.extend({ linkId: z.string(), direction: z.enum(['outgoing', 'incoming']).optional() });

/** A ticket in full, with names where the REST page nests objects: every name is valid input to the other tools. */
const ticketDetail = z.object({
  id: z.string(),
  humanId: z.string(),
  title: z.string(),
  description: z.string(),
  state: z.string(),
  stateCategory: z.enum(['open', 'closed']),
  kind: z.string(),
  priority: z.string(),
  project: z.string().nullable().describe('Project key; null: the Inbox'),
  assignee: z.string().nullable(),
  reporter: z.string().nullable(),
  billingClient: z.string().nullable(),
  labels: z.array(z.string()),
  dueDate: z.string().nullable(),
  startDate: z.string().nullable(),
  estimateMinutes: z.number().nullable(),
  source: z.string(),
  archived: z.boolean(),
  closedAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  viewers: z.array(z.string()),
  links: z.object({
    parent: ref.nullable(),
    children: z.array(ref),
    blocks: z.array(linkRef),
    blockedBy: z.array(linkRef),
    relates: z.array(linkRef),
    duplicates: z.array(linkRef),
  }),
  billing: z.record(z.string(), z.unknown()).optional(),
  time: z.record(z.string(), z.number()).nullable(),
  codehost: z.array(z.object({ id: z.string(), repo: z.string(), sha: z.string().nullable(), pr: z.number().nullable(), url: z.string() })),
  attachments: z.array(z.object({ id: z.string(), filename: z.string(), size: z.number() })),
  permissions: z.record(z.string(), z.unknown()).describe('What you may do; moveState: the states you may set ({id, name}), customerResolveState likewise'),
  commentCount: z.number(),
  comments: z.array(z.object({ id: z.string(), author: z.string().nullable(), audience: z.string(), body: z.string(), createdAt: z.string() })),
  commentsOmitted: z.number(),
  events: z.array(z.object({ kind: z.string(), actor: z.string().nullable(), payload: z.record(z.string(), z.unknown()), createdAt: z.string() })).optional(),
});

const INCLUDES = ['events', 'comments'] as const;
type Include = (typeof INCLUDES)[number];

const refOf = (r: { id: string; humanId: string; title: string; state: { name: string } }) => ({
  id: r.id,
  humanId: r.humanId,
  title: r.title,
  state: r.state.name,
});

type StateNames = ReadonlyMap<string, string>;

/** The page's permissions with states by id and name (`moveState`), so "I can move this to In review" needs no lookup. */
function permissionsOf(page: TicketPage, names: StateNames): Record<string, unknown> {
  const { moveState, customerResolveStateId, ...rest } = page.permissions;
  const state = (id: string) => ({ id, name: names.get(id) ?? id });
  return { ...rest, moveState: moveState.map(state), customerResolveState: customerResolveStateId ? state(customerResolveStateId) : null };
}

/** The TicketPage made compact: names instead of nested objects where lists repeat them, no HTML. */
export function ticketDetailOf(page: TicketPage, include: readonly Include[], names: StateNames): z.input<typeof ticketDetail> {
  const l = page.links;
  return {
    id: page.id,
    humanId: page.humanId,
    title: page.title,
    description: page.description,
    state: page.state.name,
    stateCategory: page.state.category,
    kind: page.kind.name,
    priority: page.priority.name,
    project: page.project?.key ?? null,
    assignee: page.assignee?.name ?? null,
    reporter: page.reporter?.name ?? null,
    billingClient: page.billingClient?.name ?? null,
    labels: page.labels.map((l) => l.name),
    dueDate: page.dueDate,
    startDate: page.startDate,
    estimateMinutes: page.estimateMinutes,
    source: page.source,
    archived: page.archived,
    closedAt: page.closedAt,
    createdAt: page.createdAt,
    updatedAt: page.updatedAt,
    viewers: page.viewers.map((v) => v.name),
    links: {
      parent: l.parent ? refOf(l.parent) : null,
      children: l.children.map(refOf),
      blocks: l.blocks.map((x) => ({ ...refOf(x), linkId: x.linkId })),
      blockedBy: l.blockedBy.map((x) => ({ ...refOf(x), linkId: x.linkId })),
      relates: l.relates.map((x) => ({ ...refOf(x), linkId: x.linkId })),
      duplicates: l.duplicates.map((x) => ({ ...refOf(x), linkId: x.linkId, direction: x.direction })),
    },
    ...(page.billing ? { billing: { ...page.billing } } : {}),
    time: page.time ? { ...page.time } : null,
    codehost: page.codehost.map(({ id, repo, sha, pr, url }) => ({ id, repo, sha, pr, url })),
    attachments: page.attachments.map(({ id, filename, size }) => ({ id, filename, size })),
    permissions: permissionsOf(page, names),
    commentCount: page.commentCount,
    comments: page.comments.map((c) => ({ id: c.id, author: c.author?.name ?? null, audience: c.audience, body: c.body, createdAt: c.createdAt })),
    commentsOmitted: page.commentsOmitted ?? 0,
    ...(include.includes('events')
      ? { events: page.events.map((e) => ({ kind: e.kind, actor: e.actor?.name ?? null, payload: e.payload, createdAt: e.createdAt })) }
      : {}),
  };
}

export const getTicketTool = defineTool({
  name: 'get_ticket',
  title: 'Get ticket',
  description:
    'One ticket in full: description, people, links (with linkIds), time, code-host links, your permissions, latest comments trimmed. include "comments" for all in full, "events" for the timeline.',
  toolset: 'tickets',
  op: readTicketPage,
  idempotent: true,
  input: () =>
    z.object({
      ticket: ticketArg(),
      include: z.array(z.enum(INCLUDES)).max(INCLUDES.length).default([]).describe('Extra sections.'),
    }),
  output: ticketDetail,
  fields: { ref: 'ticket' },
  args: (_ctx, a) => readInput(a.ticket, a.include),
  result: (read, a, ctx) => detailOf(ctx, read, a.include),
  text: ticketText,
});

/** The core read's input for get_ticket: the latest comments trimmed, unless all are asked for. */
const readInput = (ticket: string, include: readonly Include[]) => ({
  ref: ticket,
  comments: include.includes('comments') ? null : LATEST_COMMENTS,
});

/**
 * The page made get_ticket's detail, with state names from the workflow. The workflow is read
 * after the page rather than beside it: both long-lived processes (web, stdio) serve it from
 * their cache, so the second read costs no round trip, and the tool stays one operation.
 */
async function detailOf(ctx: Ctx, read: TicketPageRead, include: readonly Include[]): Promise<z.input<typeof ticketDetail>> {
  // without ifNoneMatch the core always answers the page
  if (read.status !== 200) throw new Error('a read without If-None-Match answered 304');
  const workflow = await runOp(getWorkflow, ctx, {});
  return ticketDetailOf(read.page, include, new Map(workflow.states.map((st) => [st.id, st.name])));
}

/**
 * One ticket as get_ticket (and the `worktracker://tickets/{humanId}` resource) shows it: the page
 * through the core's read operation (its visibility and errors), state names from the workflow.
 */
export async function readTicketDetail(ctx: Ctx, ticket: string, include: readonly Include[] = []): Promise<z.input<typeof ticketDetail>> {
  return detailOf(ctx, await runOp(readTicketPage, ctx, readInput(ticket, include)), include);
}

const refLine = (r: { humanId: string; title: string }) => `${r.humanId} ${r.title}`;

/** get_ticket's text: the ticket in a few lines (the full page is the structuredContent). */
function ticketText(t: z.output<typeof ticketDetail>): string {
  const facts = [
    t.project ? `project ${t.project}` : 'Inbox',
    t.assignee ? `assignee ${t.assignee}` : 'unassigned',
    t.reporter ? `reporter ${t.reporter}` : null,
    t.dueDate ? `due ${t.dueDate}` : null,
    t.billingClient ? `client ${t.billingClient}` : null,
    t.labels.length ? `labels ${t.labels.join(', ')}` : null,
  ].filter(Boolean);
  const l = t.links;
  const links = [
    l.parent ? `parent ${refLine(l.parent)}` : null,
    l.children.length ? `children ${l.children.map((c) => c.humanId).join(', ')}` : null,
    l.blockedBy.length ? `blocked by ${l.blockedBy.map((c) => c.humanId).join(', ')}` : null,
    l.blocks.length ? `blocks ${l.blocks.map((c) => c.humanId).join(', ')}` : null,
  ].filter(Boolean);
  const moves = (t.permissions.moveState as { name: string }[] | undefined) ?? [];
  const description = t.description.trim();
  return [
    `${t.humanId} [${t.state}, ${t.priority}, ${t.kind}${t.archived ? ', archived' : ''}] ${t.title}`,
    facts.join(' · '),
    ...(description ? [description.length > 300 ? `${description.slice(0, 299)}…` : description] : []),
    ...(links.length ? [`Links: ${links.join('; ')}`] : []),
    `Comments: ${t.commentCount}${t.commentsOmitted ? ` (${t.comments.length} shown)` : ''}`,
    moves.length ? `You can move it to: ${moves.map((m) => m.name).join(', ')}` : 'You cannot change its state.',
  ].join('\n');
}
