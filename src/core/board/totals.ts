import { clientProjects, memberProjects, visibleTicket } from '../access/visible.ts';
import type { Ctx } from '../ctx.ts';
import { ticketFilterSchema, type TicketFilters } from '../tickets/filters.ts';
import type { Fragment } from '../tickets/summary.ts';

/** The Inbox's key in `board_counts` (sql/077_board_counts.sql). */
const INBOX_KEY = '00000000-0000-0000-0000-000000000000';

/** Filters a counter cannot answer: all but those naming a project (or the Inbox) or selecting columns. */
const UNCOUNTABLE = (Object.keys(ticketFilterSchema.shape) as (keyof TicketFilters)[]).filter(
  (k) => !['projectId', 'queue', 'stateIds', 'stateCategory'].includes(k),
);

/** Whether the board's totals can come from `board_counts` (no filter on anything but project, Inbox and state). */
export function countersAnswer(f: TicketFilters): boolean {
  return UNCOUNTABLE.every((k) => f[k] === undefined);
}

/**
 * The column total of workflow state row `s` from the counters, exact: the counts of the projects
 * the caller sees whole (every non-archived ticket of them is visible to the caller), plus a
 * count of the visible tickets outside those projects, found from the tickets the caller takes part in
 * (reporter, assignee, viewer). Its cost follows the number of the caller's projects and of the
 * tickets they take part in, not the number of tickets in the column.
 *
 * "Seen whole" restates the project part of `visibleTicket` (access/visible.ts), token narrowing
 * included; the rest goes through `visibleTicket` itself, so a project left out here is only counted
 * the slow way, never wrongly.
 */
export function countedTotalSql(ctx: Ctx, f: TicketFilters): Fragment {
  const { sql, principal: p } = ctx;
  const columnOn = stateFilter(ctx, f);
  const counted = sql`(select coalesce(sum(c.n), 0)::int from board_counts c
    where c.workspace_id = ${p.workspaceId} and c.state_id = s.id and ${wholeProjects(ctx, f, sql`c.project_key`)})`;
  if (p.role === 'owner' || p.role === 'admin') return sql`(case when ${columnOn} then ${counted} else 0 end)`;
  return sql`(case when ${columnOn} then ${counted} + coalesce((${outsideByState(ctx, f)} ->> s.id::text)::int, 0) else 0 end)`;
}

/**
 * The visible tickets outside the projects seen whole, per state id (a json object), computed
 * once per statement (uncorrelated). Skipped at once when no project the caller may see is left
 * outside (say a token whose allow-list holds only the member's own projects).
 */
function outsideByState(ctx: Ctx, f: TicketFilters): Fragment {
  const { sql, principal: p } = ctx;
  const key: Fragment = sql`coalesce(t.project_id, ${INBOX_KEY}::uuid)`;
  const somewhereOutside = sql`exists (
    select 1 from (select pr.id as key from projects pr where pr.workspace_id = ${p.workspaceId} union all select ${INBOX_KEY}::uuid) k
    where ${narrowing(ctx, sql`k.key`)} and ${projectFilter(ctx, f, sql`k.key`)} and not ${wholeProjects(ctx, f, sql`k.key`)})`;
  return sql`(select coalesce(jsonb_object_agg(o.state_id, o.n), '{}'::jsonb) from (
    select t.state_id, count(*)::int as n from tickets t
    where ${somewhereOutside} and t.id = any(${involvedTickets(ctx)}) and t.workspace_id = ${p.workspaceId} and not t.archived
      and not ${wholeProjects(ctx, f, key)} and ${projectFilter(ctx, f, key)} and ${visibleTicket(sql, p)}
    group by t.state_id) o)`;
}

/** The board's state filters, over the column's state row `s`. */
function stateFilter(ctx: Ctx, f: TicketFilters): Fragment {
  const { sql } = ctx;
  const ids: Fragment = f.stateIds ? sql`s.id = any(${f.stateIds}::uuid[])` : sql`true`;
  return f.stateCategory ? sql`${ids} and s.category = ${f.stateCategory}` : ids;
}

/** projectId and queue=inbox over a project key. */
function projectFilter(ctx: Ctx, f: TicketFilters, key: Fragment): Fragment {
  const { sql } = ctx;
  const project: Fragment = f.projectId ? sql`${key} = ${f.projectId}::uuid` : sql`true`;
  return f.queue === 'inbox' ? sql`${project} and ${key} = ${INBOX_KEY}::uuid` : project;
}

/**
 * Condition on a project key: the caller sees every non-archived ticket of that project (the
 * Inbox is the zero key), within the board's project filters. Owner and admin: every project and
 * the Inbox; member and agent: their projects and the Inbox; an elevated client: their client's
 * projects; a client: none. A token without triage never has the Inbox, an allow-list only its projects.
 */
function wholeProjects(ctx: Ctx, f: TicketFilters, key: Fragment): Fragment {
  const { sql, principal: p } = ctx;
  let role: Fragment;
  switch (p.role) {
    case 'owner':
    case 'admin':
      role = sql`true`;
      break;
    case 'member':
    case 'agent':
      role = sql`(${key} = ${INBOX_KEY}::uuid or ${key} in (${memberProjects(sql, p)}))`;
      break;
    case 'client_elevated':
      role = sql`${key} in (${clientProjects(sql, p.clientId!)})`;
      break;
    case 'client':
      role = sql`false`;
      break;
  }
  return sql`(${role} and ${narrowing(ctx, key)} and ${projectFilter(ctx, f, key)})`;
}

/** A token's narrowing over a project key: an allow-list keeps to its projects, no triage keeps out of the Inbox. */
function narrowing(ctx: Ctx, key: Fragment): Fragment {
  const { sql, principal: p } = ctx;
  if (p.projectIds) return sql`${key} = any(${p.projectIds as string[]}::uuid[])`;
  if (!p.scopes.has('triage')) return sql`${key} <> ${INBOX_KEY}::uuid`;
  return sql`true`;
}

/** The ids of the workspace's tickets the caller reports, is assigned to or views: computed once per statement. */
function involvedTickets(ctx: Ctx): Fragment {
  const { sql, principal: p } = ctx;
  const me = p.identityId;
  return sql`array(
    select c.id from tickets c where c.reporter_id = ${me}::uuid and c.workspace_id = ${p.workspaceId}
    union select c.id from tickets c where c.assignee_id = ${me}::uuid and c.workspace_id = ${p.workspaceId}
    union select v.ticket_id from ticket_viewers v where v.identity_id = ${me}::uuid)`;
}
