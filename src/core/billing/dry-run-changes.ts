import { z } from 'zod';
import type { Db } from '../../db/connect.ts';
import { pricedEntriesSql } from '../rates/resolve.ts';
import { dateTimeOut, describing, uuidOut } from '../response-schema.ts';
import { isoSql } from '../tickets/summary.ts';
import type { RunPeriod } from './qualifying.ts';

/**
 * What changed since the last run of a period (issue 23), for the dry run: the entries the run
 * would bill now, compared line by line with the lines the period's latest stored run billed
 * (the latest run holding lines, voided or not; a failed or still-allocating run holds none).
 * - added: an entry that run did not bill (a late entry; one moved to this client or made billable);
 * - removed: a line of that run that would not be billed again, once the run's lines were released
 *   (a voided run); a line still standing stays billed, so it is not "removed";
 * - changed: an entry billed again with other minutes, rate or currency (after a void), or a
 *   correction of a line that run billed (minutes and amount are the correction's, signed).
 * Amounts are charged amounts in minor units (free and bank lines count 0); null in a workspace
 * without rates, and where the lines compared are in different currencies (the client's currency
 * changed), since such amounts do not add up.
 */

export interface ChangeTotals {
  entryCount: number;
  /** Minutes added, removed, or the signed difference (changed). */
  minutes: number;
  /** Charged amount, in minor units of `currency` (signed difference for changed); null when not comparable. */
  amountMinor: number | null;
}

export interface ClientChanges {
  clientId: string;
  clientName: string;
  /** The currency of the amounts; null without rates. */
  currency: string | null;
  added: ChangeTotals;
  removed: ChangeTotals;
  changed: ChangeTotals;
}

export interface RunChanges {
  /** The run compared with: the period's latest run that billed lines. */
  since: { runId: string; status: string; createdAt: string };
  /** Clients with at least one difference, by name. */
  clients: ClientChanges[];
}

const changeTotals = z.object({
  entryCount: z.number().int(),
  minutes: z.number().int().describe('Minutes added or removed; for changed lines, the signed difference.'),
  amountMinor: z
    .number()
    .int()
    .nullable()
    .describe('Charged amount in minor units of `currency` (changed: the signed difference); null without rates or across currencies.'),
});

export const runChangesSchema = describing<RunChanges | null>()(
  z
    .object({
      since: z
        .object({ runId: uuidOut, status: z.string(), createdAt: dateTimeOut })
        .describe("The run compared with: the period's latest run that billed lines (voided or not)."),
      clients: z.array(
        z.object({
          clientId: uuidOut,
          clientName: z.string(),
          currency: z.string().nullable(),
          added: changeTotals.describe('Entries that run did not bill.'),
          removed: changeTotals.describe('Lines of that run, released by its void, that would not be billed again.'),
          changed: changeTotals.describe('Entries billed again with other minutes, rate or currency, and corrections of its lines.'),
        }),
      ),
    })
    .nullable()
    .meta({ id: 'RunChanges' })
    .describe('What changed since the last run of the period, per client; null when the period has no earlier run with lines.'),
);

/** The dry run's comparison with the period's latest run that billed lines; null when there is none. */
export async function dryRunChanges(sql: Db, workspaceId: string, period: RunPeriod): Promise<RunChanges | null> {
  const [last] = await sql<{ id: string; status: string; createdAt: string }[]>`
    select r.id, r.status, ${isoSql(sql, sql`r.created_at`)} as "createdAt" from billing_runs r
    where r.workspace_id = ${workspaceId} and r.period_id = ${period.id}
      and exists (select 1 from billing_run_entries l where l.run_id = r.id)
    order by r.created_at desc, r.id desc limit 1`;
  if (!last) return null;
  const clients = await sql<ClientChanges[]>`
    with p as (${pricedEntriesSql(sql, workspaceId, period)}),
    b as (select l.entry_id, l.client_id, l.minutes, l.rate_minor, l.currency, l.amount_minor, l.active from billing_run_entries l where l.run_id = ${last.id}),
    corrected as (select p.entry_id, b.entry_id as original from p join time_entries e on e.id = p.entry_id join b on b.entry_id = e.corrects_entry_id),
    diff as (
      select p.client_id, 'added' as kind, p.minutes, p.amount_minor as amount, p.currency, true as comparable
      from p where not exists (select 1 from b where b.entry_id = p.entry_id) and not exists (select 1 from corrected k where k.entry_id = p.entry_id)
      union all
      select b.client_id, 'removed', b.minutes, b.amount_minor, b.currency, true
      from b where not b.active and not exists (select 1 from p where p.entry_id = b.entry_id)
      union all
      select p.client_id, 'changed', p.minutes - b.minutes, p.amount_minor - b.amount_minor, p.currency, p.currency is not distinct from b.currency
      from p join b on b.entry_id = p.entry_id
      where p.minutes <> b.minutes or p.rate_minor is distinct from b.rate_minor or p.currency is distinct from b.currency
      union all
      select p.client_id, 'changed', p.minutes, p.amount_minor, p.currency, true from p join corrected k on k.entry_id = p.entry_id
    ),
    per_client as (
      select d.client_id,
             case when count(distinct d.currency) = 1 then min(d.currency) end as currency,
             bool_and(d.comparable and d.currency is not null) and count(distinct d.currency) = 1 as comparable
      from diff d group by d.client_id
    )
    select c.id as "clientId", c.name as "clientName", pc.currency,
           ${totals(sql, 'added')} as added, ${totals(sql, 'removed')} as removed, ${totals(sql, 'changed')} as changed
    from per_client pc join clients c on c.id = pc.client_id
    order by c.name, c.id`;
  return { since: { runId: last.id, status: last.status, createdAt: last.createdAt }, clients };
}

/** One kind's totals of a client (`pc`), from `diff`, as a JSON object. */
function totals(sql: Db, kind: 'added' | 'removed' | 'changed') {
  return sql`(
    select json_build_object('entryCount', count(*)::int, 'minutes', coalesce(sum(d.minutes), 0)::int,
                             'amountMinor', case when pc.comparable then coalesce(sum(d.amount), 0)::bigint end)
    from diff d where d.client_id = pc.client_id and d.kind = ${kind})`;
}
