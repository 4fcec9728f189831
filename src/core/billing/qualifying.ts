import type { Db } from '../../db/connect.ts';
import { effectiveBillingModeSql, effectiveBillingPolicySql } from '../tickets/filters.ts';

type Fragment = ReturnType<Db>;

/** The period a run bills. */
export interface RunPeriod {
  id: string;
  periodStart: string;
  periodEnd: string;
}

/**
 * The entries a run over `period` bills, as a query of rows (entry_id, client_id, project_id,
 * ticket_id, minutes, category_id, spent_on, policy, bank_id) — the one definition behind the dry run, the 409
 * `nothing_to_bill` check and the allocation, so the preview is exactly what a run takes:
 * - billable, unbilled entries with a billing client (internal work is never billed);
 * - of tickets billed by `period`: the entries of this period;
 * - of tickets billed `on_close`: the entries dated up to the period end, from any earlier
 *   period open or closed, once the ticket is closed (closed state, closed on or before the end).
 * A correction is an entry like any other: it rides in the run that takes its own period (its
 * original's run when both qualify together, else a later run as its own signed line).
 * The policy is the ticket's effective one at allocation; a `bank:` policy whose bank belongs to
 * another client than the entry's billing client bills the line as `paid` (a collaborating
 * client never draws on someone else's bank).
 */
export function qualifyingEntriesSql(sql: Db, workspaceId: string, period: RunPeriod): Fragment {
  // Two materialized steps, so the plan cannot depend on statistics (issue 25): first the workspace's unbilled billable
  // entries that could qualify (the period's, or dated up to its end for on_close tickets), then the inherited policy and
  // mode of their tickets only, computed once per ticket. Left to the planner as one join, stale statistics after a bulk
  // insert made it start from every ticket of every workspace and compute the inherited policy (correlated subqueries on
  // the project and the client) for each: 100,000 tickets took 7-10 s of CPU per statement where 600 take milliseconds.
  return sql`
    with cand as materialized (
      select e.id, e.billing_client_id, e.project_id, e.ticket_id, e.minutes, e.category_id, e.spent_on, e.period_id
      from time_entries e
      where e.workspace_id = ${workspaceId} and not e.billed and e.billable and e.billing_client_id is not null
        and (e.period_id = ${period.id}::uuid or e.spent_on <= ${period.periodEnd}::date)
    ),
    tk as materialized (
      select t.id, lower(${effectiveBillingPolicySql(sql, 't')}) as policy, ${effectiveBillingModeSql(sql, 't')} as mode,
             st.category = 'closed' and t.closed_at < (${period.periodEnd}::date + 1)::timestamp at time zone 'UTC' as closed_in_time
      from (select distinct ticket_id from cand) c
      join tickets t on t.id = c.ticket_id and t.workspace_id = ${workspaceId}
      join workflow_states st on st.id = t.state_id
    )
    select e.id as entry_id, e.billing_client_id as client_id, e.project_id, e.ticket_id, e.minutes, e.category_id, e.spent_on,
           case when x.policy like 'bank:%' then (case when b.id is not null then 'bank' else 'paid' end)
                when x.policy = 'free' then 'free' else 'paid' end as policy,
           b.id as bank_id
    from cand e
    join tk x on x.id = e.ticket_id
    left join banks b on b.id = (case when x.policy like 'bank:%' then substr(x.policy, 6)::uuid end) and b.client_id = e.billing_client_id
    where (x.mode = 'period' and e.period_id = ${period.id}::uuid)
       or (x.mode = 'on_close' and e.spent_on <= ${period.periodEnd}::date and x.closed_in_time)`;
}
