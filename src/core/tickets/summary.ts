import type { Db } from '../../db/connect.ts';
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
 * The rows a summary looks up around ticket row `t`, each a chain of (table and alias, condition);
 * the first condition ties the chain to `t`. Aliases are prefixed `ts_` so they do not collide with
 * the caller's. The same chains serve as joins (summaryJoins) or as correlated lookups.
 */
function dimensions(sql: Db): Dimensions {
  let d = dimensionsOf.get(sql);
  if (!d) dimensionsOf.set(sql, (d = buildDimensions(sql)));
  return d;
}

type Dimensions = ReturnType<typeof buildDimensions>;

/**
 * The dimensions and the joins hold no value, only SQL text and identifiers, so they are built once
 * per connection pool (or transaction) and reused: postgres.js reads a fragment when it writes the
 * statement and never changes it. Rebuilt per call they cost about 0.1 ms of CPU (and its garbage)
 * per list page, ticket page or board column (issue 25, measured in-process).
 */
const dimensionsOf = new WeakMap<Db, Dimensions>();
const joinsOf = new WeakMap<Db, Fragment>();

function buildDimensions(sql: Db) {
  const person = (i: string, m: string, c: string, column: string): [Fragment, Fragment][] => [
    [sql`identities ${sql(i)}`, sql`${sql(i)}.id = t.${sql(column)}`],
    [sql`memberships ${sql(m)}`, sql`${sql(m)}.workspace_id = t.workspace_id and ${sql(m)}.identity_id = ${sql(i)}.id`],
    [sql`clients ${sql(c)}`, sql`${sql(c)}.id = ${sql(m)}.client_id`],
  ];
  return {
    state: [[sql`workflow_states ts_state`, sql`ts_state.id = t.state_id`]],
    kind: [[sql`ticket_kinds ts_kind`, sql`ts_kind.id = t.kind_id`]],
    priority: [[sql`priorities ts_prio`, sql`ts_prio.id = t.priority_id`]],
    project: [[sql`projects ts_proj`, sql`ts_proj.id = t.project_id`]],
    assignee: person('ts_asg', 'ts_asgm', 'ts_asgc', 'assignee_id'),
    reporter: person('ts_rep', 'ts_repm', 'ts_repc', 'reporter_id'),
    billingClient: [[sql`clients ts_bill`, sql`ts_bill.id = t.billing_client_id`]],
  } satisfies Record<string, [Fragment, Fragment][]>;
}

/**
 * The joins `summaryJson` (joined mode) needs around ticket row `t`. Joins rather than correlated
 * lookups for cached plans: measured 0.6 ms less per 50-row page once postgres.js's prepared
 * statement runs a generic plan; the larger join search costs only the first few plans.
 */
export function summaryJoins(sql: Db): Fragment {
  let joins = joinsOf.get(sql);
  if (!joins) {
    joins = Object.values(dimensions(sql))
      .flat()
      .reduce<Fragment>((acc, [table, on]) => sql`${acc} left join ${table} on ${on}`, sql``);
    joinsOf.set(sql, joins);
  }
  return joins;
}

/**
 * Like `summaryJoins`, with the kinds, states and priorities of the caller's workspace joined as
 * json objects built once per statement instead of once per ticket (PostgreSQL reuses the hash of
 * an uncorrelated join when a board's LATERAL is run again for the next column): for
 * `summaryJson`'s `prebuilt` mode. Only the workflow's vocabulary, a few rows per workspace:
 * projects and clients may number thousands, more than the 400 tickets of a board.
 */
export function summaryJoinsPrebuilt(sql: Db, p: Principal): Fragment {
  const ws = p.workspaceId;
  return sql`${summaryJoins(sql)}
    left join (select k.id, ${kindJson(sql, 'k')} as j
               from ticket_kinds k where k.workspace_id = ${ws}::uuid) tj_kind on tj_kind.id = t.kind_id
    left join (select s.id, ${stateJson(sql, 's')} as j
               from workflow_states s where s.workspace_id = ${ws}::uuid) tj_state on tj_state.id = t.state_id
    left join (select pr.id, ${priorityJson(sql, 'pr')} as j
               from priorities pr where pr.workspace_id = ${ws}::uuid) tj_prio on tj_prio.id = t.priority_id`;
}

/**
 * How `summaryJson` reaches the looked-up rows: `joined` expects summaryJoins in the FROM clause
 * (best for a statement whose plan is cached); `lookup` reads each through a correlated subquery,
 * which plans about 2 ms faster (best for a statement planned on every call); `prebuilt` expects
 * summaryJoinsPrebuilt (rows of the caller's workspace only: the board and "my work").
 */
export type SummaryMode = 'joined' | 'lookup' | 'prebuilt';

/**
 * The TicketSummary of ticket row `t` as one json value. `parentId` is shown only when the
 * parent is visible to the caller, and `commentCount` counts only the comments the caller may read.
 * Written from a row of type `json_ticket_summary` (sql/107_summary_row_types.sql), whose attribute
 * names are the keys: the values below are in the type's attribute order.
 */
export function summaryJson(sql: Db, p: Principal, mode: SummaryMode = 'joined'): Fragment {
  const d = dimensions(sql);
  const from = (dim: [Fragment, Fragment][], value: Fragment, prebuilt?: Fragment): Fragment => {
    if (mode === 'prebuilt') return prebuilt ?? value;
    if (mode === 'joined') return value;
    const [[first, key], ...rest] = dim as [[Fragment, Fragment], ...[Fragment, Fragment][]];
    const joins = rest.reduce<Fragment>((acc, [table, on]) => sql`${acc} left join ${table} on ${on}`, sql``);
    return sql`(select ${value} from ${first} ${joins} where ${key})`;
  };
  const person = (i: string, c: string): Fragment =>
    sql`case when ${sql(i)}.id is null then null else row(${sql(i)}.id, ${personNameSql(sql, sql`t.workspace_id`, i)}, ${sql(c)}.name)::json_person end`;
  return sql`to_json(row(
    t.id,
    coalesce(${from(d.project, sql`ts_proj.key`)}, 'INBOX') || '-' || t.number,
    t.title,
    ${from(d.kind, kindJson(sql, 'ts_kind'), sql`tj_kind.j`)},
    ${from(d.state, stateJson(sql, 'ts_state'), sql`tj_state.j`)},
    ${from(d.priority, priorityJson(sql, 'ts_prio'), sql`tj_prio.j`)},
    ${from(d.project, sql`case when ts_proj.id is null then null else row(ts_proj.id, ts_proj.key, ts_proj.name)::json_named_ref end`)},
    case when t.project_id is null then 'inbox' end,
    ${from(d.assignee, person('ts_asg', 'ts_asgc'))},
    ${from(d.reporter, person('ts_rep', 'ts_repc'))},
    ${from(d.billingClient, sql`case when ts_bill.id is null then null else row(ts_bill.id, ts_bill.name)::json_client end`)},
    coalesce((select ls.labels from ticket_label_sets ls where ls.ticket_id = t.id), '[]'::json),
    t.due_date,
    t.start_date,
    t.estimate_minutes,
    case when t.parent_id is not null
          and exists (select 1 from tickets ts_par where ts_par.id = t.parent_id and ${visibleTicket(sql, p, 'ts_par')})
         then t.parent_id end,
    ${
      readableAudiences(p).length === 2
        ? sql`t.comment_count` // every audience: the count kept on the ticket
        : sql`(select count(*)::int from comments c where c.ticket_id = t.id and c.audience = any(${readableAudiences(p)}::text[]))`
    },
    ${isoSql(sql, sql`t.created_at`)},
    ${isoSql(sql, sql`t.updated_at`)}
  )::json_ticket_summary)`;
}

/** A summary's `kind` of ticket_kinds row `alias`, as json. */
function kindJson(sql: Db, alias: string): Fragment {
  const k = sql(alias);
  return sql`to_json(row(${k}.id, ${k}.key, ${k}.name)::json_named_ref)`;
}

/** A summary's `state` of workflow_states row `alias`, as json. */
function stateJson(sql: Db, alias: string): Fragment {
  const s = sql(alias);
  return sql`to_json(row(${s}.id, ${s}.key, ${s}.name, ${s}.category, ${s}.position)::json_state)`;
}

/** A summary's `priority` of priorities row `alias`, as json. */
function priorityJson(sql: Db, alias: string): Fragment {
  const r = sql(alias);
  return sql`to_json(row(${r}.id, ${r}.key, ${r}.name, ${r}.position)::json_priority)`;
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
  // a statement planned on every call reads its lookups through subqueries (cheaper to plan)
  const mode: SummaryMode = q.customPlan ? 'lookup' : 'joined';
  const query = sql<SummaryRow[]>`
    select ${q.asText ? sql`${summaryJson(sql, p, mode)}::text as summary, t.id` : sql`${summaryJson(sql, p, mode)} as summary`}, t.page_key as key
           ${q.mark ? sql`, ${q.mark} as read_mark` : sql``}
    from (
      select t.id, t.workspace_id, t.project_id, t.number, t.title, t.kind_id, t.state_id, t.priority_id, t.assignee_id, t.reporter_id,
             t.billing_client_id, t.due_date, t.start_date, t.estimate_minutes, t.parent_id, t.comment_count, t.created_at, t.updated_at,
             ${q.key ?? sql`null::text`} as page_key, row_number() over (order by ${q.order}) as page_rank
      from tickets t ${q.joins ?? sql``}
      where ${visibleTicket(sql, p)} and ${q.where}
      order by ${q.order}
      limit ${limitSql(sql, q.limit)}
    ) t
    ${mode === 'joined' ? summaryJoins(sql) : sql``}
    order by t.page_rank`;
  if (q.customPlan) unnamedStatement(query);
  if (!q.asText) return query;
  const rows = await byteRows<'summary' | 'id' | 'key' | 'read_mark'>(query);
  return rows.map((r) => ({ summary: r.summary!, id: textOf(r.id)!, key: textOf(r.key), read_mark: textOf(r.read_mark) ?? undefined }));
}

/**
 * Sends a query as an unnamed statement, which PostgreSQL plans with the bound values each time
 * (postgres.js otherwise prepares named statements, whose plan may become generic after five
 * runs). postgres.js reads this per-query option; its typings only expose it on `sql.unsafe`.
 */
function unnamedStatement<T>(query: T): T {
  (query as unknown as { options: { prepare?: boolean } }).options.prepare = false;
  return query;
}

/** The TicketSummary of one visible ticket, or null when it does not exist or is not visible. */
export async function getTicketSummary(ctx: Ctx, ticketId: string): Promise<TicketSummary | null> {
  const [row] = await selectSummaries(ctx, { where: ctx.sql`t.id = ${ticketId}::uuid`, order: ctx.sql`t.id`, limit: 1 });
  return row?.summary ?? null;
}
