import { visibilityCandidates, visibleTicket } from '../access/visible.ts';
import type { Ctx } from '../ctx.ts';
import { limitSql, summaryArrayText, summaryJoins, summaryJson, summaryText, type Fragment } from '../tickets/summary.ts';

/**
 * SQL building blocks shared by the board and "my work": pages of tickets as json arrays of
 * TicketSummaries, so several lists can be read in one statement (one snapshot, one round trip).
 */

/** Board order inside a column: most urgent priority first (position 0), then most recent activity, then id: a total order. */
export const boardOrder = (ctx: Ctx): Fragment => ctx.sql`-t.priority_position desc, t.updated_at desc, t.id desc`;

/** The keyset of board order as text: `<priority position>,<updated_at in UTC with microseconds>` (the id travels separately). */
export const boardKey = (ctx: Ctx): Fragment =>
  ctx.sql`t.priority_position::text || ',' || to_char(t.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US')`;

export interface PageQuery {
  /** Conditions over `t`, ANDed with the caller's visibility (always applied). */
  where: Fragment;
  /** A total order over `t`. */
  order: Fragment;
  limit: number;
}

/** See `visibilityCandidates` in access/visible.ts: the rule lives beside the visibility it narrows. */
export function candidatesSql(ctx: Ctx): Fragment {
  return visibilityCandidates(ctx.sql, ctx.principal);
}

/** The caller's visibility of ticket row `t`, with the client candidate set in front when there is one. */
export function visibleSql(ctx: Ctx): Fragment {
  return ctx.sql`${candidatesSql(ctx)} and ${visibleTicket(ctx.sql, ctx.principal)}`;
}

/**
 * The columns a page's rows carry: what a summary reads beside its stored text (summaryText) and
 * what the lists' orders read. Not `t.*`: a ticket row with its search vectors is wide, and the
 * pages copy their rows through sorts and unions (a tenth of "my work"'s statement).
 */
const pageColumns = (ctx: Ctx): Fragment => ctx.sql`t.id, t.parent_id, t.comment_count, t.priority_position, t.due_date, t.updated_at`;

/** One page of ticket rows (the `pageColumns`, plus `page_rank`), visibility included. */
export function pageRowsSql(ctx: Ctx, q: PageQuery): Fragment {
  const { sql } = ctx;
  return sql`
    select ${pageColumns(ctx)}, row_number() over (order by ${q.order}) as page_rank
    from tickets t
    where ${visibleSql(ctx)} and ${q.where}
    order by ${q.order}
    limit ${limitSql(sql, q.limit)}`;
}

/**
 * A json array of the TicketSummaries of `rows` (a subquery as built by `pageRowsSql`) in
 * page order, `[]` when empty. With `key`, each element is `{summary, key}` instead.
 */
export function summaryArraySql(ctx: Ctx, rows: Fragment, key?: Fragment): Fragment {
  const { sql, principal: p } = ctx;
  const summary = summaryJson(sql, p);
  const element = key ? sql`json_build_object('summary', ${summary}, 'key', ${key})` : summary;
  return sql`(select coalesce(json_agg(${element} order by t.page_rank), '[]'::json) from (${rows}) t ${summaryJoins(sql)})`;
}

/**
 * For a LATERAL join: one row with the page's summaries as a JSON array, as text, in page order
 * (`tickets`, `[]` when empty), how many (`shown`), and the board key and id of its last ticket
 * (`last_key`, `last_id`; null when empty), from which the caller builds the next cursor. The board's
 * REST form sends `tickets` as PostgreSQL wrote it; its object form reads it as json.
 */
export function summaryPageSql(ctx: Ctx, rows: Fragment, key: Fragment): Fragment {
  const { sql, principal: p } = ctx;
  // the key of the last ticket only, read again by id (same snapshot): formatting it for every row cost 50 to_char per column
  return sql`(select x.tickets, x.shown, x.last_id, (select ${key} from tickets t where t.id = x.last_id) as last_key
              from (select ${summaryArrayText(sql, p, sql`t.page_rank`)} as tickets,
                           (array_agg(t.id order by t.page_rank desc))[1] as last_id,
                           count(*)::int as shown
                    from (${rows}) t ${summaryJoins(sql)}) x)`;
}

/**
 * Several pages (each built by `pageRowsSql`) as one row of JSON arrays as text, one column per
 * list: the summaries of the union of the pages are read in one join.
 */
export function summaryListsSql(ctx: Ctx, lists: [name: string, rows: Fragment][]): Fragment {
  const { sql, principal: p } = ctx;
  const union = lists.map(([name, rows]) => sql`select ${name}::text as list, r.* from (${rows}) r`).reduce((acc, part) => sql`${acc} union all ${part}`);
  const columns = lists
    .map(([name]) => sql`'[' || coalesce(string_agg(x.summary, ',' order by x.page_rank) filter (where x.list = ${name}::text), '') || ']' as ${sql(name)}`)
    .reduce((acc, col) => sql`${acc}, ${col}`);
  return sql`
    select ${columns}
    from (select t.list, t.page_rank, ${summaryText(sql, p)} as summary from (${union}) t ${summaryJoins(sql)}) x`;
}

/** The caller's today (their membership's timezone, else UTC) as a date expression. */
export function todaySql(ctx: Ctx): Fragment {
  const { sql, principal: p } = ctx;
  return sql`(${ctx.now()}::timestamptz at time zone coalesce(
    (select m.timezone from memberships m where m.workspace_id = ${p.workspaceId} and m.identity_id = ${p.identityId}), 'UTC'))::date`;
}

/**
 * The workspace's change-feed high-water mark (see sql/040_changes.sql): changes are numbered in
 * commit order, so a ticket with a change numbered above the mark of a snapshot changed after it.
 */
export function changeMarkSql(ctx: Ctx): Fragment {
  return ctx.sql`(select coalesce(max(c.seq), 0)::text from ticket_changes c where c.workspace_id = ${ctx.principal.workspaceId} and c.seq is not null)`;
}
