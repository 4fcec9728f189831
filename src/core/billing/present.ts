import type { Db } from '../../db/connect.ts';
import { notFound } from '../errors.ts';

export type RunStatus = 'allocating' | 'rendering' | 'awaiting_approval' | 'delivering' | 'completed' | 'failed' | 'voided';

/** Minutes of a set of run lines, by how they are billed. `billableMinutes` are the minutes charged (`paid` lines). */
export interface LineTotals {
  entryCount: number;
  minutes: number;
  billableMinutes: number;
  freeMinutes: number;
  bankMinutes: number;
}

export interface RunClient extends LineTotals {
  clientId: string;
  clientName: string;
  /** Money of a priced run (issue 23), absent from an hours-only one: the client's currency at allocation. */
  currency?: string;
  /** Charged: the sum of the client's rounded paid lines, in minor units. */
  amountMinor?: number;
  /** What all its lines cost at their rates (free and bank time included). */
  listAmountMinor?: number;
}

/** A billing run as the API shows it. */
export interface BillingRun {
  id: string;
  periodId: string;
  periodStart: string;
  periodEnd: string;
  status: RunStatus;
  dryRun: false;
  entryCount: number;
  minutes: number;
  billableMinutes: number;
  clients: RunClient[];
  /** The run's current documents (every format; superseded versions left out). */
  documentIds: string[];
  createdBy: string | null;
  createdAt: string;
  completedAt: string | null;
  voidedAt: string | null;
  voidedBy: string | null;
  voidReason: string | null;
  /** The purchase-order number the run's timesheets print (issue 23); null: none. */
  poNumber: string | null;
  /** When and by whom a run held for review was approved (issue 23); null otherwise. */
  approvedAt: string | null;
  approvedBy: string | null;
  /** Why a failed run failed. */
  error: string | null;
}

const iso = (sql: Db, col: ReturnType<Db>) => sql`to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** Sums of run lines `l` (a billing_run_entries alias) as LineTotals columns. */
export const lineTotalsSql = (sql: Db) => sql`
  count(*)::int as "entryCount", coalesce(sum(l.minutes), 0)::int as minutes,
  coalesce(sum(l.minutes) filter (where l.policy = 'paid'), 0)::int as "billableMinutes",
  coalesce(sum(l.minutes) filter (where l.policy = 'free'), 0)::int as "freeMinutes",
  coalesce(sum(l.minutes) filter (where l.policy = 'bank'), 0)::int as "bankMinutes"`;

/** One run of the workspace in the API's shape, in one statement; 404 when unknown. */
export async function presentRun(sql: Db, workspaceId: string, runId: string): Promise<BillingRun> {
  const [run] = await sql<BillingRun[]>`
    select r.id, r.period_id as "periodId", p.period_start::text as "periodStart", p.period_end::text as "periodEnd", r.status,
           false as "dryRun", coalesce(t."entryCount", 0) as "entryCount", coalesce(t.minutes, 0) as minutes,
           coalesce(t."billableMinutes", 0) as "billableMinutes",
           -- json_strip_nulls: the money keys are left out of an hours-only run (its lines have no currency)
           coalesce((select json_agg(json_strip_nulls(json_build_object('clientId', c.id, 'clientName', c.name, 'entryCount', x."entryCount",
                                                       'minutes', x.minutes, 'billableMinutes', x."billableMinutes",
                                                       'freeMinutes', x."freeMinutes", 'bankMinutes', x."bankMinutes",
                                                       'currency', x.currency, 'amountMinor', x.amount, 'listAmountMinor', x.list_amount)) order by c.name, c.id)
                     from (select l.client_id, ${lineTotalsSql(sql)}, max(l.currency) as currency, sum(l.amount_minor)::bigint as amount,
                                  sum(l.list_amount_minor)::bigint as list_amount
                           from billing_run_entries l where l.run_id = r.id group by l.client_id) x
                     join clients c on c.id = x.client_id), '[]'::json) as clients,
           array(select d.id::text from documents d where d.run_id = r.id and not d.redacted order by d.number, d.format) as "documentIds",
           r.created_by as "createdBy", ${iso(sql, sql`r.created_at`)} as "createdAt", ${iso(sql, sql`r.completed_at`)} as "completedAt",
           ${iso(sql, sql`r.voided_at`)} as "voidedAt", r.voided_by as "voidedBy", r.void_reason as "voidReason", r.po_number as "poNumber",
           ${iso(sql, sql`r.approved_at`)} as "approvedAt", r.approved_by as "approvedBy", r.error
    from billing_runs r
    join periods p on p.id = r.period_id
    left join lateral (select ${lineTotalsSql(sql)} from billing_run_entries l where l.run_id = r.id) t on true
    where r.id = ${runId} and r.workspace_id = ${workspaceId}`;
  if (!run) throw notFound('unknown_run', undefined, 'No such billing run.');
  return run;
}
