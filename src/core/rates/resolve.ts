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
  return sql`
    select q.*, m.currency, m.rate_minor, m.list_amount_minor,
           case when q.policy = 'paid' then m.list_amount_minor else case when m.currency is not null then 0 end end as amount_minor,
           (m.currency is not null and m.rate_minor is null) as unrated
    from (${qualifyingEntriesSql(sql, workspaceId, period)}) q
    join clients c on c.id = q.client_id
    cross join lateral (select exists (select 1 from rates where workspace_id = ${workspaceId}) as priced) w
    left join lateral (
      select r.hourly_minor from rates r
      where w.priced and r.workspace_id = ${workspaceId} and r.category_id = q.category_id and r.currency = c.currency
        and r.effective_from <= q.spent_on
        and ((r.project_id is null and r.client_id is null) or r.project_id = q.project_id or r.client_id = q.client_id)
      order by (r.project_id is not null) desc, (r.client_id is not null) desc, r.effective_from desc
      limit 1
    ) rt on true
    cross join lateral (
      select case when w.priced then c.currency end as currency, rt.hourly_minor as rate_minor,
             case when w.priced then coalesce(${lineAmountSql(sql, sql`q.minutes`, sql`rt.hourly_minor`)}, 0) end as list_amount_minor
    ) m`;
}

/** minutes × hourly rate / 60, rounded half away from zero (numeric `round`), as an integer: money.ts lineAmountMinor in SQL. */
export function lineAmountSql(sql: Db, minutes: Fragment, hourlyMinor: Fragment): Fragment {
  return sql`round(${minutes}::numeric * ${hourlyMinor} / 60)::int`;
}
