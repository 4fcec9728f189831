import type { Db } from '../../db/connect.ts';
import { qualifyingEntriesSql, type RunPeriod } from '../billing/qualifying.ts';

type Fragment = ReturnType<Db>;

/**
 * The qualifying entries of a run (billing/qualifying.ts) with their money, as a query of rows:
 * every column of the qualifying query plus `currency`, `rate_minor`, `list_amount_minor`,
 * `amount_minor` and `unrated` — the one definition behind the dry run, the check that blocks a
 * run with unrated time, and the allocation, so the preview shows exactly what a run stores.
 * - A workspace without any rate bills hours only, as before issue 23: the money columns are null.
 * - Otherwise the client's currency, and the rate in that currency for the entry's category in
 *   effect on its date (the latest `effective_from` on or before it): the project's override,
 *   else the client's, else the workspace default. No such rate: `rate_minor` null, `unrated`.
 * - `list_amount_minor`: minutes × rate / 60 rounded once, half away from zero (money.ts
 *   lineAmountMinor is the same rule); `amount_minor`: the list amount of a paid line, 0 for free
 *   and bank lines (they show what they would have cost) and for an unrated line.
 */
export function pricedEntriesSql(sql: Db, workspaceId: string, period: RunPeriod): Fragment {
  // The rate is looked up for the first entry of each (category, client, project, day) and shared
  // with the others by the window (a subquery in a CASE runs only for the rows that reach it): a
  // month's entries share a few thousand of these, and the look-up per entry was three quarters of
  // this query (20,000 entries: 250 ms for the check that blocks a run with unrated time, run at
  // the start of every run, and again in the allocation; issue 25). A join of the entries with their
  // distinct keys would do the same, but the planner, which cannot estimate the qualifying rows,
  // chose a nested loop over it (4 s).
  const key = sql`q.category_id, q.client_id, q.project_id, q.spent_on`;
  // the qualifying query's columns by name (billing/qualifying.ts), so the window's helpers (nth,
  // priced, the client's currency) stay inside: a column added there is added here too
  return sql`
    select q.entry_id, q.client_id, q.project_id, q.ticket_id, q.minutes, q.category_id, q.spent_on, q.policy, q.bank_id,
           m.currency, m.rate_minor, m.list_amount_minor,
           case when q.policy = 'paid' then m.list_amount_minor else case when m.currency is not null then 0 end end as amount_minor,
           (m.currency is not null and m.rate_minor is null) as unrated
    from (
      select q.*, w.priced, c.currency,
             max(case when q.nth = 1 and w.priced then (
               select r.hourly_minor from rates r
               where r.workspace_id = ${workspaceId} and r.category_id = q.category_id and r.currency = c.currency
                 and r.effective_from <= q.spent_on
                 and ((r.project_id is null and r.client_id is null) or r.project_id = q.project_id or r.client_id = q.client_id)
               order by (r.project_id is not null) desc, (r.client_id is not null) desc, r.effective_from desc
               limit 1) end) over (partition by ${key}) as hourly_minor
      from (select q.*, row_number() over (partition by ${key}) as nth from (${qualifyingEntriesSql(sql, workspaceId, period)}) q) q
      join clients c on c.id = q.client_id
      cross join (select exists (select 1 from rates where workspace_id = ${workspaceId}) as priced) w
    ) q
    cross join lateral (
      select case when q.priced then q.currency end as currency, q.hourly_minor as rate_minor,
             case when q.priced then coalesce(${lineAmountSql(sql, sql`q.minutes`, sql`q.hourly_minor`)}, 0) end as list_amount_minor
    ) m`;
}

/** minutes × hourly rate / 60, rounded half away from zero (numeric `round`), as an integer: money.ts lineAmountMinor in SQL. */
export function lineAmountSql(sql: Db, minutes: Fragment, hourlyMinor: Fragment): Fragment {
  return sql`round(${minutes}::numeric * ${hourlyMinor} / 60)::int`;
}
