import { plannedPerCall, type Db } from '../../db/connect.ts';
import { byteRows, textOf } from '../../db/raw.ts';
import type { Principal } from '../auth/principal.ts';
import { visibleTicket } from '../access/visible.ts';
import type { Ctx } from '../ctx.ts';
import { readableAudiences } from '../access/permissions.ts';

export type Fragment = ReturnType<Db>;

export interface PersonRef {
  id: string;
  name: string;
  clientName: string | null;
}

/** The contract's TicketSummary. */
export interface TicketSummary {
  id: string;
  humanId: string;
  title: string;
  kind: { id: string; key: string; name: string };
  state: { id: string; key: string; name: string; category: 'open' | 'closed'; position: number };
  priority: { id: string; key: string; name: string; position: number };
  project: { id: string; key: string; name: string } | null;
  /** `inbox` for Inbox tickets, else null. `review` is reserved by the contract and never produced (docs/decisions.md). */
  queue: 'inbox' | 'review' | null;
  assignee: PersonRef | null;
  reporter: PersonRef | null;
  billingClient: { id: string; name: string } | null;
  labels: { id: string; name: string }[];
  dueDate: string | null;
  startDate: string | null;
  estimateMinutes: number | null;
  parentId: string | null;
  commentCount: number;
  createdAt: string;
  updatedAt: string;
}

/** A datetime as the contract shows it: ISO 8601 UTC with milliseconds, formatted in SQL so nested JSON agrees. */
export function isoSql(sql: Db, expr: Fragment): Fragment {
  return sql`to_char(${expr} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/**
 * The name workspace `workspace` shows for identity row `alias`: its own mail-learned name
 * (contact_names), else the identity's. The same expression as the SQL function `person_name`
 * (sql/070), written out because PostgreSQL cannot inline a function holding a subquery: each call
 * ran the function's executor (about 15 us), 300 of them on a ticket page and 800 on a board,
 * while the written-out lookup costs well under a microsecond.
 */
export function personNameSql(sql: Db, workspace: Fragment, alias: string): Fragment {
  const i = sql(alias);
  return sql`coalesce((select pn.name from contact_names pn where pn.workspace_id = ${workspace} and pn.identity_id = ${i}.id), ${i}.name)`;
}

/**
 * A page size as a literal in the statement text instead of a parameter. With `limit $n` the generic
 * plan of a prepared statement assumes a tenth of the rows, costs far more than the custom plans, and
 * PostgreSQL plans the statement again on every call (the list: 5 ms planning for 5 ms of work);
 * with the literal it keeps the cached plan after five calls. Page sizes are bounded small integers,
 * so each connection prepares at most a few dozen variants.
 */
export function limitSql(sql: Db, limit: number): Fragment {
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new Error(`page size out of range: ${limit}`);
  return sql.unsafe(String(limit)) as unknown as Fragment;
}

/** `PREFIX-N` of ticket row `alias` (Inbox tickets: `INBOX-N`). */
export function humanIdSql(sql: Db, alias: string): Fragment {
  const t = sql(alias);
  return sql`(coalesce((select hp.key from projects hp where hp.id = ${t}.project_id), 'INBOX') || '-' || ${t}.number)`;
}

/**
 * The join `summaryText` (joined mode) needs around ticket row `t`: its stored summary
 * (sql/108_ticket_summaries.sql), which every ticket has.
 */
export function summaryJoins(sql: Db): Fragment {
  let joins = joinsOf.get(sql);
  if (!joins) joinsOf.set(sql, (joins = sql`join ticket_summaries ts_sum on ts_sum.ticket_id = t.id`));
  return joins;
}

/**
 * The join holds no value, only SQL text, so it is built once per connection pool (or transaction)
 * and reused: postgres.js reads a fragment when it writes the statement and never changes it.
 */
const joinsOf = new WeakMap<Db, Fragment>();

/**
 * How `summaryText` reaches the stored summary: `joined` expects summaryJoins in the FROM clause;
 * `lookup` reads it through a correlated subquery (for a statement that has no place for the join).
 */
export type SummaryMode = 'joined' | 'lookup';

/**
 * The TicketSummary of ticket row `t` as JSON text: the stored head and tail (sql/108, written when
 * the ticket or a row it names changes) around the two keys that depend on the reader: `parentId`,
 * shown only when the parent is visible to the caller, and `commentCount`, counting only the comments
 * the caller may read. Text, not json: a cast to json would parse every summary again (about 8 us
 * each); the doors that send it as it is aggregate it as text (`summaryArrayText`), the object forms
 * use `summaryJson`.
 */
export function summaryText(sql: Db, p: Principal, mode: SummaryMode = 'joined'): Fragment {
  const reader = sql`',"parentId":' || coalesce('"' || (case when t.parent_id is not null
          and exists (select 1 from tickets ts_par where ts_par.id = t.parent_id and ${visibleTicket(sql, p, 'ts_par')})
         then t.parent_id end)::text || '"', 'null') || ',"commentCount":' || ${
           readableAudiences(p).length === 2
             ? sql`t.comment_count` // every audience: the count kept on the ticket
             : sql`(select count(*)::int from comments c where c.ticket_id = t.id and c.audience = any(${readableAudiences(p)}::text[]))`
         }`;
  if (mode === 'lookup') return sql`(select ts_sum.head || ${reader} || ts_sum.tail from ticket_summaries ts_sum where ts_sum.ticket_id = t.id)`;
  return sql`(ts_sum.head || ${reader} || ts_sum.tail)`;
}

/** `summaryText` as a json value, for statements whose answer the process reads as objects. */
export function summaryJson(sql: Db, p: Principal, mode: SummaryMode = 'joined'): Fragment {
  return sql`${summaryText(sql, p, mode)}::json`;
}

/**
 * A JSON array, as text, of the summaries of the rows of `from` (a FROM clause binding ticket rows to `t`
 * with summaryJoins) in the order `order`: `[]` when there is none.
 */
export function summaryArrayText(sql: Db, p: Principal, order: Fragment): Fragment {
  return sql`('[' || coalesce(string_agg(${summaryText(sql, p)}, ',' order by ${order}), '') || ']')`;
}

/** A page of GET /tickets (and of a board column). */
export interface TicketList {
  items: TicketSummary[];
  nextCursor: string | null;
}

export interface SummaryQuery {
  /** Conditions on ticket row `t`, ANDed with the caller's visibility (always applied here). */
  where: Fragment;
  /** ORDER BY over `t` (and `joins`); must be a total order, e.g. end with `t.id`. */
  order: Fragment;
  /** Page size; the query fetches exactly this many rows at most. */
  limit: number;
  /** Extra joins for `where`/`order`/`key` in the inner (paged) query. */
  joins?: Fragment;
  /** An expression over `t` returned as `key` with each row, for the caller's keyset cursor. */
  key?: Fragment;
  /**
   * Plan with the actual values on every call instead of a cached generic plan. For filters
   * whose best plan depends on the value, above all full-text search: a rare word wants the GIN
   * index and a sort, a common one the updatedAt index; the generic plan measured 30x slower.
   */
  customPlan?: boolean;
  /** The summary as the JSON PostgreSQL wrote, its bytes unread, for a door that sends it as is (core/json-text.ts). */
  asText?: boolean;
  /** Selected beside every row as `read_mark`: the read mark of the statement's snapshot (core/reads/remembered.ts). */
  mark?: Fragment | null;
}

export interface SummaryRow {
  summary: TicketSummary;
  key: string | null;
}

/** A row of `selectSummaries` with `asText`: the summary's JSON as PostgreSQL sent it (bytes) and the ticket's id beside it. */
export interface SummaryTextRow {
  summary: Buffer;
  id: string;
  key: string | null;
  /** With `mark`: the read mark the statement saw. */
  read_mark?: string;
}

/**
 * One page of TicketSummaries in ONE statement: the inner query picks the page (visibility,
 * filters, order, limit: index-friendly), the outer one decorates only those rows.
 * Shared by GET /tickets, the board and "my work".
 */
export async function selectSummaries(ctx: Ctx, q: SummaryQuery & { asText?: false }): Promise<SummaryRow[]>;
export async function selectSummaries(ctx: Ctx, q: SummaryQuery & { asText: true }): Promise<SummaryTextRow[]>;
export async function selectSummaries(ctx: Ctx, q: SummaryQuery): Promise<SummaryRow[] | SummaryTextRow[]> {
  const { sql, principal: p } = ctx;
  const query = sql<SummaryRow[]>`
    select ${q.asText ? sql`${summaryText(sql, p)} as summary, t.id` : sql`${summaryJson(sql, p)} as summary`}, t.page_key as key
           ${q.mark ? sql`, ${q.mark} as read_mark` : sql``}
    from (
      select t.id, t.parent_id, t.comment_count, -- what summaryText reads beside the stored text
             ${q.key ?? sql`null::text`} as page_key, row_number() over (order by ${q.order}) as page_rank
      from tickets t ${q.joins ?? sql``}
      where ${visibleTicket(sql, p)} and ${q.where}
      order by ${q.order}
      limit ${limitSql(sql, q.limit)}
    ) t
    ${summaryJoins(sql)}
    order by t.page_rank`;
  if (q.customPlan) plannedPerCall(query);
  if (!q.asText) return query;
  const rows = await byteRows<'summary' | 'id' | 'key' | 'read_mark'>(query);
  return rows.map((r) => ({ summary: r.summary!, id: textOf(r.id)!, key: textOf(r.key), read_mark: textOf(r.read_mark) ?? undefined }));
}

/** The TicketSummary of one visible ticket, or null when it does not exist or is not visible. */
export async function getTicketSummary(ctx: Ctx, ticketId: string): Promise<TicketSummary | null> {
  const [row] = await selectSummaries(ctx, { where: ctx.sql`t.id = ${ticketId}::uuid`, order: ctx.sql`t.id`, limit: 1 });
  return row?.summary ?? null;
}
