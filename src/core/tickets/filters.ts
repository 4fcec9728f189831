import { z } from 'zod';
import type { Db } from '../../db/connect.ts';
import { isClientRole } from '../auth/principal.ts';
import { requireScope } from '../auth/guards.ts';
import type { Ctx } from '../ctx.ts';
import { forbidden, invalid } from '../errors.ts';
import { humanIdTicketSql, parseHumanId } from './ref.ts';
import { BILLING_POLICY } from './schemas.ts';
import type { Fragment } from './summary.ts';
import { unknownPerson } from '../resolve/people.ts';

/**
 * The ticket filters of GET /tickets, also accepted by the board: query-string values in, one
 * SQL condition over ticket row `t` out. Visibility is not part of it (selectSummaries adds that).
 */

/** Ids one list filter may name. */
export const MAX_FILTER_IDS = 20;

// A query string carries `a,b,c` (or the parameter repeated); a tool call may send an array.
const idList = (what: string) =>
  z
    .union([
      z
        .string()
        .max(1000)
        .transform((s) => s.split(',')),
      // bounded as the pipe below is, so the published schema (OpenAPI, MCP) says what is refused
      z.array(z.string().max(100)).min(1).max(MAX_FILTER_IDS),
    ])
    .transform((ids) => ids.map((x) => x.trim().toLowerCase()))
    .pipe(z.array(z.uuid()).min(1).max(MAX_FILTER_IDS))
    .optional()
    .describe(`${what} ids (1 to ${MAX_FILTER_IDS}), comma-separated or as an array; a ticket matches when it has any of them.`);

const personFilter = (role: string) =>
  z
    .union([z.enum(['me', 'none']), z.uuid().transform((s) => s.toLowerCase())])
    .optional()
    .describe(`${role}: a person's identity id, "me" for the caller, or "none" for tickets without one.`);

export const ticketFilterSchema = z.object({
  projectId: z
    .uuid()
    .transform((s) => s.toLowerCase())
    .optional()
    .describe('Only tickets of this project (uuid).'),
  queue: z.literal('inbox').optional().describe('"inbox": only Inbox tickets (not yet routed to a project). Needs the triage scope.'),
  stateIds: idList('Workflow state'),
  kindIds: idList('Ticket kind'),
  labelIds: idList('Label'),
  priorityIds: idList('Priority'),
  stateCategory: z.enum(['open', 'closed']).optional().describe('Only tickets whose state is in this category.'),
  assigneeId: personFilter('Assignee'),
  reporterId: personFilter('Reporter'),
  viewerId: personFilter('Viewer (the reporter counts as a viewer)'),
  billingClientId: z
    .union([z.literal('none'), z.uuid().transform((s) => s.toLowerCase())])
    .optional()
    .describe('Billing client id, or "none" for internal work (no billing client).'),
  billingPolicy: z
    .string()
    .max(60)
    .regex(BILLING_POLICY, 'Expected paid, free or bank:<uuid>.')
    .transform((s) => s.toLowerCase())
    .optional()
    .describe('Effective billing policy (ticket, else project, else client; default paid): "paid", "free" or "bank:<bank uuid>".'),
  due: z
    .enum(['overdue', 'week', 'none'])
    .optional()
    .describe('"overdue": open tickets due before today; "week": due today or in the next 6 days; "none": no due date. Days are in the caller\'s timezone.'),
  q: z
    .string()
    .max(200)
    .optional()
    .describe('Full-text search over title, description and readable comments (web-search syntax), or an exact human id like "WEB-12".'),
});

export type TicketFilters = z.output<typeof ticketFilterSchema>;

/**
 * A billing setting in force for ticket row `alias`: the ticket's own, else its project's, else
 * the client's (the project's billing client, or the ticket's for an Inbox ticket), else `fallback`.
 */
function inheritedBillingSql(sql: Db, alias: string, column: 'billing_policy' | 'billing_mode', fallback: string): Fragment {
  const t = sql(alias);
  const c = sql(column);
  return sql`coalesce(${t}.${c},
    (select ep.${c} from projects ep where ep.id = ${t}.project_id),
    (select ec.${c} from clients ec
      where ec.id = coalesce((select ep.billing_client_id from projects ep where ep.id = ${t}.project_id), ${t}.billing_client_id)),
    ${fallback}::text)`;
}

/** Billing policy in force for ticket row `alias` (default paid). */
export const effectiveBillingPolicySql = (sql: Db, alias: string): Fragment => inheritedBillingSql(sql, alias, 'billing_policy', 'paid');

/** Billing mode in force for ticket row `alias` (default period). */
export const effectiveBillingModeSql = (sql: Db, alias: string): Fragment => inheritedBillingSql(sql, alias, 'billing_mode', 'period');

/** Access rules of the filters themselves: the Inbox, a token's allow-list, billing for clients. */
function checkFilterAccess(ctx: Ctx, f: TicketFilters): void {
  const p = ctx.principal;
  if (f.queue === 'inbox') {
    if (isClientRole(p.role)) throw forbidden('inbox_forbidden', undefined, 'Client users do not see the Inbox.');
    if (p.projectIds) throw forbidden('project_not_allowed', undefined, 'A token restricted to projects never sees the Inbox.');
    requireScope(p, 'triage');
  }
  if (f.projectId && p.projectIds && !p.projectIds.includes(f.projectId)) {
    throw forbidden('project_not_allowed', { projectId: f.projectId }, 'This token is not allowed on that project.');
  }
  if (f.billingPolicy && isClientRole(p.role)) {
    throw forbidden('billing_fields_forbidden', { field: 'billingPolicy' }, 'Billing is not visible to client users.');
  }
}

const uuidOf = (v: string | undefined) => (v && v !== 'me' && v !== 'none' ? v : null);

/** Ids in the filters that name nothing in the workspace are a 400 (one statement, only when ids were given). */
async function checkFilterIds(ctx: Ctx, f: TicketFilters): Promise<void> {
  const { sql, principal: p } = ctx;
  const persons = [f.assigneeId, f.reporterId, f.viewerId].map(uuidOf).filter((x): x is string => x !== null);
  const client = uuidOf(f.billingClientId);
  const lists = [f.stateIds, f.kindIds, f.labelIds, f.priorityIds];
  if (!f.projectId && !client && persons.length === 0 && lists.every((l) => !l)) return;
  const missing = (table: Fragment, ids: string[] | undefined) =>
    sql`(select min(x::text) from unnest(${ids ?? []}::uuid[]) as x where not exists (select 1 from ${table} r where r.id = x and r.workspace_id = ${p.workspaceId}))`;
  const [row] = await sql<Record<string, string | null>[]>`
    select ${missing(sql`workflow_states`, f.stateIds)} as "stateIds",
           ${missing(sql`ticket_kinds`, f.kindIds)} as "kindIds",
           ${missing(sql`labels`, f.labelIds)} as "labelIds",
           ${missing(sql`priorities`, f.priorityIds)} as "priorityIds",
           ${missing(sql`projects`, f.projectId ? [f.projectId] : [])} as "projectId",
           ${missing(sql`clients`, client ? [client] : [])} as "billingClientId",
           (select min(x::text) from unnest(${persons}::uuid[]) as x
             where not exists (select 1 from memberships m where m.identity_id = x and m.workspace_id = ${p.workspaceId})) as person`;
  const reasons: [string, string][] = [
    ['stateIds', 'unknown_state'],
    ['kindIds', 'unknown_kind'],
    ['labelIds', 'unknown_label'],
    ['priorityIds', 'unknown_priority'],
    ['projectId', 'unknown_project'],
    ['billingClientId', 'unknown_client'],
  ];
  for (const [field, reason] of reasons) {
    const id = row?.[field];
    if (id) throw invalid(reason, { field, id }, `${field}: no such id in this workspace.`);
  }
  if (row?.person) {
    const field = (['assigneeId', 'reporterId', 'viewerId'] as const).find((k) => f[k] === row.person)!;
    throw unknownPerson('fieldValue', { field, id: row.person }, `${field}: no such person in this workspace.`);
  }
}

/** `q`: the full-text vectors the caller may search, or a ticket whose (current or old) human id is exactly q. */
function searchSql(ctx: Ctx, raw: string): Fragment {
  const { sql, principal: p } = ctx;
  const q = raw.trim();
  const query = sql`websearch_to_tsquery('simple', ${q}::text)`;
  const text: Fragment = isClientRole(p.role) ? sql`t.search_public @@ ${query}` : sql`(t.search_public || t.search_internal) @@ ${query}`;
  const human = parseHumanId(q);
  if (!human) return text;
  return sql`(${text} or t.id = any(array(${humanIdTicketSql(sql, p.workspaceId, human)})))`;
}

function personSql(sql: Db, column: 'assignee_id' | 'reporter_id', v: string, me: string): Fragment {
  const col = sql(column);
  if (v === 'none') return sql`t.${col} is null`;
  return sql`t.${col} = ${v === 'me' ? me : v}::uuid`;
}

function viewerSql(sql: Db, v: string, me: string): Fragment {
  if (v === 'none') return sql`(t.reporter_id is null and not exists (select 1 from ticket_viewers fv where fv.ticket_id = t.id))`;
  const who = v === 'me' ? me : v;
  return sql`(t.reporter_id = ${who}::uuid or exists (select 1 from ticket_viewers fv where fv.ticket_id = t.id and fv.identity_id = ${who}::uuid))`;
}

/** The caller's today (memberships.timezone) as a date expression, evaluated once per statement. */
function todaySql(ctx: Ctx): Fragment {
  const { sql, principal: p } = ctx;
  return sql`(select (${ctx.now()}::timestamptz at time zone coalesce(
                (select m.timezone from memberships m where m.workspace_id = ${p.workspaceId} and m.identity_id = ${p.identityId}), 'UTC'))::date)`;
}

function stateCategorySql(ctx: Ctx, category: 'open' | 'closed'): Fragment {
  const { sql, principal: p } = ctx;
  return sql`t.state_id = any(array(select s.id from workflow_states s where s.workspace_id = ${p.workspaceId} and s.category = ${category}))`;
}

function dueSql(ctx: Ctx, due: 'overdue' | 'week' | 'none'): Fragment {
  const { sql } = ctx;
  if (due === 'none') return sql`t.due_date is null`;
  if (due === 'week') return sql`t.due_date between ${todaySql(ctx)} and ${todaySql(ctx)} + 6`;
  return sql`(t.due_date < ${todaySql(ctx)} and ${stateCategorySql(ctx, 'open')})`;
}

/**
 * Checks the filters (access, ids) and returns them as one condition over ticket row `t`.
 * Throws 403 `forbidden` for the Inbox without triage or on a restricted token, a project outside
 * the token's allow-list, or a billing filter from a client user; 400 `invalid` for unknown ids.
 */
export async function ticketFilterWhere(ctx: Ctx, f: TicketFilters): Promise<{ where: Fragment }> {
  checkFilterAccess(ctx, f);
  await checkFilterIds(ctx, f);
  const { sql, principal: p } = ctx;
  const me = p.identityId;
  const parts: Fragment[] = [];
  if (f.projectId) parts.push(sql`t.project_id = ${f.projectId}::uuid`);
  if (f.queue === 'inbox') parts.push(sql`t.project_id is null`);
  if (f.stateIds) parts.push(sql`t.state_id = any(${f.stateIds}::uuid[])`);
  if (f.kindIds) parts.push(sql`t.kind_id = any(${f.kindIds}::uuid[])`);
  if (f.priorityIds) parts.push(sql`t.priority_id = any(${f.priorityIds}::uuid[])`);
  if (f.labelIds) parts.push(sql`exists (select 1 from ticket_labels fl where fl.ticket_id = t.id and fl.label_id = any(${f.labelIds}::uuid[]))`);
  if (f.stateCategory) parts.push(stateCategorySql(ctx, f.stateCategory));
  if (f.assigneeId) parts.push(personSql(sql, 'assignee_id', f.assigneeId, me));
  if (f.reporterId) parts.push(personSql(sql, 'reporter_id', f.reporterId, me));
  if (f.viewerId) parts.push(viewerSql(sql, f.viewerId, me));
  if (f.billingClientId) parts.push(f.billingClientId === 'none' ? sql`t.billing_client_id is null` : sql`t.billing_client_id = ${f.billingClientId}::uuid`);
  if (f.billingPolicy) parts.push(sql`lower(${effectiveBillingPolicySql(sql, 't')}) = ${f.billingPolicy}`);
  if (f.due) parts.push(dueSql(ctx, f.due));
  if (f.q && f.q.trim()) parts.push(searchSql(ctx, f.q));
  // Wrapped in an object: a postgres.js fragment is a thenable, and an async function resolving
  // to one would run it as a query.
  return { where: parts.reduce<Fragment>((acc, part) => sql`${acc} and ${part}`, sql`true`) };
}
