import { z } from 'zod';
import { visibleTicket } from '../access/visible.ts';
import { defineOp } from '../operation.ts';
import { pageRowsSql, summaryArraySql, todaySql, visibleSql } from '../board/page.ts';
import type { Fragment, TicketSummary } from '../tickets/summary.ts';
import { summaryJson } from '../tickets/summary.ts';
import { assertInAllowList } from '../access/placement.ts';

/** Days without any timeline event after which an open ticket counts as stale. */
export const STALE_DAYS = 14;
/** Due today or within this many days (today included) counts as due soon; the window of GET /tickets?due=week. */
export const DUE_SOON_DAYS = 7;
export const PACK_LIMIT_MAX = 50;

export const contextPackInput = z.object({
  scope: z
    .enum(['mine', 'visible'])
    .default('mine')
    .describe(
      '"mine" (default): tickets assigned to you, reported by you or that you watch; "visible": every ticket you can see. "assigned" and "unbilled" are always your own.',
    ),
  projectId: z.uuid().optional().describe('Only tickets of this project (uuid).'),
  limit: z.number().int().min(1).max(PACK_LIMIT_MAX).default(10).describe(`Tickets per list, 1 to ${PACK_LIMIT_MAX} (default 10).`),
});

export interface PackList<T = TicketSummary> {
  items: T[];
  /** How many more tickets the list holds beyond `items`. */
  omitted: number;
}

export interface ContextPack {
  /** The caller's today (their timezone), which overdue and due-soon are measured against. */
  today: string;
  scope: 'mine' | 'visible';
  assigned: PackList;
  overdue: PackList;
  dueSoon: PackList;
  blocked: PackList;
  stale: PackList;
  unbilled: PackList<TicketSummary & { unbilledMinutes: number }>;
}

interface ListRow {
  total: number;
  items: TicketSummary[];
}

/**
 * What needs the caller's attention, in one statement, visibility composed into every list:
 * - assigned: open tickets assigned to the caller; most urgent priority first, then earliest due date
 * - overdue: open tickets due before the caller's today; earliest first
 * - dueSoon: open tickets due today or in the next six days; earliest first
 * - blocked: open tickets with an open, visible, unarchived ticket blocking them; most urgent first
 * - stale: open tickets without any change for STALE_DAYS days; longest untouched first
 * - unbilled: tickets on which the caller logged billable time not billed yet (net of corrections,
 *   open or closed, archived included: the time still has to be billed); most minutes first
 * Archived tickets are left out of every list but `unbilled`. Each list holds at most `limit`
 * tickets and says how many it left out.
 */
export const getContextPack = defineOp({
  name: 'context.pack',
  action: 'context.pack',
  input: contextPackInput,
  // MCP only (get_context_pack shapes its own result); no REST route describes it
  output: null,
  run: async (ctx, q): Promise<ContextPack> => {
    const { sql, principal: p } = ctx;
    if (q.projectId) assertInAllowList(p, q.projectId.toLowerCase());
    const me = p.identityId;
    const today = todaySql(ctx);
    const project: Fragment = q.projectId ? sql`and t.project_id = ${q.projectId.toLowerCase()}::uuid` : sql``;
    const open = sql`t.state_id = any(array(select s.id from workflow_states s where s.workspace_id = ${p.workspaceId} and s.category = 'open'))`;
    const mine =
      q.scope === 'mine'
        ? sql`and (t.assignee_id = ${me}::uuid or t.reporter_id = ${me}::uuid
                 or exists (select 1 from ticket_viewers mv where mv.ticket_id = t.id and mv.identity_id = ${me}::uuid))`
        : sql``;
    const base = sql`t.workspace_id = ${p.workspaceId} and not t.archived and ${open} ${project}`;
    const list = (where: Fragment, order: Fragment): Fragment => sql`json_build_object(
      'total', (select count(*)::int from tickets t where ${visibleSql(ctx)} and ${where}),
      'items', ${summaryArraySql(ctx, pageRowsSql(ctx, { where, order, limit: q.limit }))})`;
    const blocker = sql`exists (
      select 1 from ticket_links l join tickets b on b.id = l.source_id
      where l.target_id = t.id and l.kind = 'blocks' and not b.archived
        and b.state_id = any(array(select s.id from workflow_states s where s.workspace_id = ${p.workspaceId} and s.category = 'open'))
        and ${visibleTicket(sql, p, 'b')})`;
    const unbilled = sql`(select e.ticket_id, sum(e.minutes)::int as unbilled_minutes from time_entries e
                        where e.workspace_id = ${p.workspaceId} and e.user_id = ${me}::uuid and e.billable and not e.billed
                        group by e.ticket_id having sum(e.minutes) > 0)`;
    const [row] = await sql<[{ today: string; assigned: ListRow; overdue: ListRow; dueSoon: ListRow; blocked: ListRow; stale: ListRow; unbilled: ListRow }]>`
    select to_char(${today}, 'YYYY-MM-DD') as today,
      ${list(sql`${base} and t.assignee_id = ${me}::uuid`, sql`t.priority_position, t.due_date nulls last, t.updated_at desc, t.id desc`)} as assigned,
      ${list(sql`${base} ${mine} and t.due_date < ${today}`, sql`t.due_date, t.priority_position, t.id`)} as overdue,
      ${list(sql`${base} ${mine} and t.due_date between ${today} and ${today} + ${DUE_SOON_DAYS - 1}::int`, sql`t.due_date, t.priority_position, t.id`)} as "dueSoon",
      ${list(sql`${base} ${mine} and ${blocker}`, sql`t.priority_position, t.updated_at desc, t.id desc`)} as blocked,
      ${list(sql`${base} ${mine} and t.updated_at < ${ctx.now()}::timestamptz - ${`${STALE_DAYS} days`}::interval`, sql`t.updated_at, t.id`)} as stale,
      json_build_object(
        'total', (select count(*)::int from tickets t join ${unbilled} u on u.ticket_id = t.id where ${visibleSql(ctx)} ${project}),
        'items', (select coalesce(json_agg(json_build_object('summary', ${summaryJson(sql, p, 'lookup')}, 'minutes', t.unbilled_minutes) order by t.rank), '[]'::json)
                  from (select t.*, u.unbilled_minutes, row_number() over (order by u.unbilled_minutes desc, t.id) as rank
                        from tickets t join ${unbilled} u on u.ticket_id = t.id
                        where ${visibleSql(ctx)} ${project}
                        order by u.unbilled_minutes desc, t.id limit ${q.limit}) t)) as unbilled`;
    const pack = (l: ListRow): PackList => ({ items: l.items, omitted: Math.max(0, l.total - l.items.length) });
    const unbilledItems = row.unbilled.items as unknown as { summary: TicketSummary; minutes: number }[];
    return {
      today: row.today,
      scope: q.scope,
      assigned: pack(row.assigned),
      overdue: pack(row.overdue),
      dueSoon: pack(row.dueSoon),
      blocked: pack(row.blocked),
      stale: pack(row.stale),
      unbilled: {
        items: unbilledItems.map((u) => ({ ...u.summary, unbilledMinutes: u.minutes })),
        omitted: Math.max(0, row.unbilled.total - unbilledItems.length),
      },
    };
  },
});
