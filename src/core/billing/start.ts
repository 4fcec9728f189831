import { z } from 'zod';
import type { Db } from '../../db/connect.ts';
import { conflict, notFound } from '../errors.ts';
import { allocateJob } from '../jobs/catalog.ts';
import { enqueue } from '../jobs/enqueue.ts';
import { defineOp } from '../operation.ts';
import { dryRunChanges } from './dry-run-changes.ts';
import { lockBilling } from './lock.ts';
import { lineTotalsSql, presentRun, type BillingRun } from './present.ts';
import { qualifyingEntriesSql, type RunPeriod } from './qualifying.ts';
import { pricedEntriesSql } from '../rates/resolve.ts';
import { billingRunSchema, runPreviewSchema, type PreviewClient, type PreviewMoney, type PreviewWarning, type RunPreview } from './run-schema.ts';
import { isoSql } from '../tickets/summary.ts';

export type { PreviewClient, PreviewProject, RunPreview } from './run-schema.ts';

export const startRunInput = z.object({
  periodId: z.uuid().describe('The closed period to bill (uuid).'),
  dryRun: z.boolean().optional().describe('Preview the allocation and write nothing.'),
  billUnratedAtZero: z
    .boolean()
    .optional()
    .describe('Bill paid entries that have no rate at zero (else such entries refuse the run: 409 missing_rate; the dry run lists them as warnings).'),
  poNumber: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .refine((s) => !/\p{Cc}/u.test(s), 'No control characters.')
    .optional()
    .describe('A purchase-order number printed on every timesheet of the run (1-100 characters).'),
});

/**
 * POST /billing/runs: Owner/Admin from a browser session. With `dryRun`, the preview of what the
 * run would bill (200, nothing written). Otherwise, under the workspace's billing lock: the
 * period must be closed (409 `period_open`), no other run may still be allocating (409
 * `run_in_progress`: its entry set is not decided yet, so a second run could only race it for the
 * same entries), some entry must qualify (409 `nothing_to_bill`), and in a workspace with rates
 * every paid entry must have one unless `billUnratedAtZero` (409 `missing_rate`, naming them); then the run is created
 * `allocating` and its `billing:allocate` job queued in the same transaction.
 */
export const startRun = defineOp({
  name: 'billing.runs.create',
  action: 'billing.runs.create',
  input: startRunInput,
  output: z.union([runPreviewSchema, billingRunSchema]),
  tx: true,
  run: async (ctx, body): Promise<BillingRun | RunPreview> => {
    const { sql, principal: p } = ctx;
    if (!body.dryRun) await lockBilling(sql, p.workspaceId);
    const period = await closedPeriod(sql, p.workspaceId, body.periodId.toLowerCase());
    if (body.dryRun) return previewRun(sql, p.workspaceId, period);
    const [busy] = await sql`select 1 from billing_runs where workspace_id = ${p.workspaceId} and status = 'allocating' limit 1`;
    if (busy) throw conflict('run_in_progress', undefined, 'Another billing run is still allocating; start this one when it has.');
    const [some] = await sql`select 1 from (${qualifyingEntriesSql(sql, p.workspaceId, period)}) q limit 1`;
    if (!some) throw await nothingToBill(sql, p.workspaceId, period);
    if (!body.billUnratedAtZero) await assertRated(sql, p.workspaceId, period);
    const [run] = await sql<{ id: string }[]>`
      insert into billing_runs (workspace_id, period_id, status, created_by, created_at, bill_unrated_at_zero, po_number)
      values (${p.workspaceId}, ${period.id}, 'allocating', ${p.identityId}, ${ctx.now()}, ${body.billUnratedAtZero ?? false}, ${body.poNumber ?? null})
      returning id`;
    await enqueue(sql, allocateJob, { workspaceId: p.workspaceId, runId: run!.id });
    return presentRun(sql, p.workspaceId, run!.id);
  },
});

/**
 * 409 `nothing_to_bill`, naming the run that billed the period's entries when one did (the latest,
 * voided runs having released theirs): `runId` and `runCreatedAt` in details and the message, so
 * whoever runs it twice learns which run to look at.
 */
async function nothingToBill(sql: Db, workspaceId: string, period: RunPeriod): Promise<Error> {
  const [billedBy] = await sql<{ id: string; createdAt: string }[]>`
    select r.id, ${isoSql(sql, sql`r.created_at`)} as "createdAt" from billing_runs r
    where r.workspace_id = ${workspaceId} and r.status <> 'voided'
      and exists (select 1 from time_entries e where e.billing_run_id = r.id and e.period_id = ${period.id})
    order by r.created_at desc, r.id desc limit 1`;
  if (!billedBy) return conflict('nothing_to_bill', { periodId: period.id }, 'No billable, unbilled entry qualifies for this period.');
  const at = billedBy.createdAt;
  return conflict(
    'nothing_to_bill',
    { periodId: period.id, runId: billedBy.id, runCreatedAt: at },
    `No billable, unbilled entry qualifies for this period: its entries were billed by run ${billedBy.id} (started ${at}).`,
  );
}

/** 409 `missing_rate` when a paid entry would be billed without a rate: the operator confirms zero (billUnratedAtZero) or sets the rate. */
async function assertRated(sql: Db, workspaceId: string, period: RunPeriod): Promise<void> {
  const unrated = await sql<{ id: string }[]>`
    select q.entry_id as id from (${pricedEntriesSql(sql, workspaceId, period)}) q where q.unrated and q.policy = 'paid' order by q.entry_id limit 101`;
  if (unrated.length === 0) return;
  throw conflict(
    'missing_rate',
    { entryIds: unrated.slice(0, 100).map((r) => r.id), more: unrated.length > 100 },
    'Some paid entries have no rate for their category, client and date: set the rates, or confirm billing them at zero (billUnratedAtZero).',
  );
}

/** The period, which must exist in the workspace (404) and be closed (409 `period_open`). */
async function closedPeriod(sql: Db, workspaceId: string, periodId: string): Promise<RunPeriod> {
  const [row] = await sql<(RunPeriod & { closed: boolean })[]>`
    select id, period_start::text as "periodStart", period_end::text as "periodEnd", closed_at is not null as closed
    from periods where id = ${periodId} and workspace_id = ${workspaceId}`;
  if (!row) throw notFound('unknown_period', undefined, 'No such period.');
  if (!row.closed) throw conflict('period_open', { periodId }, 'Close the period before billing it.');
  return { id: row.id, periodStart: row.periodStart, periodEnd: row.periodEnd };
}

/** The dry run: the qualifying entries grouped by client and project, in one statement. */
async function previewRun(sql: Db, workspaceId: string, period: RunPeriod): Promise<RunPreview> {
  const [row] = await sql<{ clients: PreviewClient[] | null; money: PreviewMoney[]; warnings: PreviewWarning[] }[]>`
    with l as (${pricedEntriesSql(sql, workspaceId, period)}),
    per_project as (
      select l.client_id, l.project_id, ${lineTotalsSql(sql)}, array_agg(l.entry_id::text order by l.entry_id) as "entryIds"
      from l group by l.client_id, l.project_id
    ),
    per_client as (select l.client_id, ${lineTotalsSql(sql)} from l group by l.client_id)
    select json_agg(json_build_object(
      'clientId', c.id, 'clientName', c.name, 'entryCount', pc."entryCount", 'minutes', pc.minutes,
      'billableMinutes', pc."billableMinutes", 'freeMinutes', pc."freeMinutes", 'bankMinutes', pc."bankMinutes",
      'projects', (select json_agg(json_build_object('projectId', pp.project_id, 'projectKey', pr.key, 'projectName', pr.name,
                     'entryCount', pp."entryCount", 'minutes', pp.minutes, 'billableMinutes', pp."billableMinutes",
                     'freeMinutes', pp."freeMinutes", 'bankMinutes', pp."bankMinutes", 'entryIds', pp."entryIds") order by pr.key)
                   from per_project pp join projects pr on pr.id = pp.project_id where pp.client_id = c.id),
      'banks', coalesce((select json_agg(json_build_object('bankId', b.id, 'name', b.name, 'minutes', s.minutes) order by b.name)
                from (select l.bank_id, sum(l.minutes)::int as minutes from l where l.client_id = c.id and l.bank_id is not null group by l.bank_id) s
                join banks b on b.id = s.bank_id), '[]'::json),
      'documents', case when c.timesheet_layout = 'project'
                     then (select json_agg(json_build_object('scope', 'project', 'projectId', pp.project_id) order by pr.key)
                           from per_project pp join projects pr on pr.id = pp.project_id where pp.client_id = c.id)
                     else json_build_array(json_build_object('scope', 'combined', 'projectId', null)) end
    ) order by c.name, c.id) as clients,
    (select coalesce(json_agg(json_build_object('clientId', x.client_id, 'currency', x.currency, 'amountMinor', x.amount,
                       'listAmountMinor', x.list_amount) order by x.client_id), '[]'::json)
     from (select l.client_id, l.currency, sum(l.amount_minor)::bigint as amount, sum(l.list_amount_minor)::bigint as list_amount
           from l where l.currency is not null group by l.client_id, l.currency) x) as money,
    (select coalesce(json_agg(json_build_object('reason', 'missing_rate', 'entryId', l.entry_id, 'clientId', l.client_id, 'projectId', l.project_id,
                       'categoryId', l.category_id, 'spentOn', l.spent_on, 'policy', l.policy) order by l.entry_id), '[]'::json)
     from l where l.unrated) as warnings
    from per_client pc join clients c on c.id = pc.client_id`;
  const clients = row?.clients ?? [];
  const sum = (k: 'entryCount' | 'minutes' | 'billableMinutes') => clients.reduce((n, c) => n + c[k], 0);
  return {
    dryRun: true,
    periodId: period.id,
    periodStart: period.periodStart,
    periodEnd: period.periodEnd,
    entryCount: sum('entryCount'),
    minutes: sum('minutes'),
    billableMinutes: sum('billableMinutes'),
    clients,
    money: row?.money ?? [],
    warnings: row?.warnings ?? [],
    changes: await dryRunChanges(sql, workspaceId, period),
  };
}
