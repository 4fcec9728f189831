import type { Db } from '../../db/connect.ts';
import { jobTx, step, type JobCtx, type JobRefs } from '../jobs/ctx.ts';
import { renderJob } from '../jobs/catalog.ts';
import { enqueue } from '../jobs/enqueue.ts';
import type { DocumentFormat } from '../documents/timesheet-model.ts';
import { lockBilling } from './lock.ts';
import { pricedEntriesSql } from '../rates/resolve.ts';
import { fixTimesheetDetails } from '../documents/details.ts';

/**
 * The `billing:allocate` job: decides a run's entry set and its timesheets, in ONE transaction
 * under the workspace's billing lock, so a crash anywhere leaves nothing and a retry does it all
 * again identically; a run no longer `allocating` was done already (the job is idempotent).
 * 1. The qualifying entries (src/core/billing/qualifying.ts) become the run's lines, with the
 *    policy each is billed under and their money (src/core/rates/resolve.ts: the rate in effect on
 *    the entry's date, stored on the line so a later rate change never alters the document); the
 *    entries are marked billed. A paid entry without a rate fails the run unless the operator
 *    confirmed billing such entries at zero (the rates changed since the run was started). The unique index on live lines
 *    is the database's guard that no entry is ever in two live runs.
 * 2. One timesheet per client (combined layout) or per client and project (project layout), each
 *    numbered `<CLIENTCODE>-<YYYY>-<NNNN>` from the client's counter for the period's year: a
 *    number is taken only by the transaction that commits its timesheet, so none is ever burned.
 * 3. A `documents:render` job per timesheet and format; the run moves to `rendering`.
 */
export async function allocateRun(ctx: JobCtx, { runId }: { runId: string }): Promise<JobRefs> {
  await jobTx(ctx, async (ctx) => {
    const { sql } = ctx;
    const [run] = await sql<{ workspaceId: string; status: string; periodId: string; periodStart: string; periodEnd: string; billUnratedAtZero: boolean }[]>`
      select r.workspace_id as "workspaceId", r.status, r.period_id as "periodId", r.bill_unrated_at_zero as "billUnratedAtZero",
             p.period_start::text as "periodStart", p.period_end::text as "periodEnd"
      from billing_runs r join periods p on p.id = r.period_id where r.id = ${runId}`;
    if (!run || run.status !== 'allocating') return;
    await lockBilling(sql, run.workspaceId);
    await sql`select 1 from billing_runs where id = ${runId} for update`;
    step(ctx, 'allocate:locked');

    const priced = pricedEntriesSql(sql, run.workspaceId, { id: run.periodId, periodStart: run.periodStart, periodEnd: run.periodEnd });
    const lines = await sql`
      insert into billing_run_entries (run_id, entry_id, workspace_id, client_id, project_id, ticket_id, minutes, policy, bank_id,
                                       currency, rate_minor, list_amount_minor, amount_minor)
      select ${runId}, q.entry_id, ${run.workspaceId}, q.client_id, q.project_id, q.ticket_id, q.minutes, q.policy, q.bank_id,
             q.currency, q.rate_minor, q.list_amount_minor, q.amount_minor
      from (${priced}) q`;
    if (!run.billUnratedAtZero) {
      // counted on the lines just written (a priced line without a rate is `unrated`), not by running the priced query
      // twice: that second pass was a quarter of a 20,000-entry allocation (issue 25); the failed run keeps no line
      const [unrated] = await sql<{ n: number }[]>`
        select count(*)::int as n from billing_run_entries where run_id = ${runId} and policy = 'paid' and currency is not null and rate_minor is null`;
      if (unrated!.n > 0) {
        await sql`delete from billing_run_entries where run_id = ${runId}`;
        await sql`update billing_runs set status = 'failed', error = ${`missing_rate: ${unrated!.n} paid entries have no rate (the rates changed since the run was started); start it again, with billUnratedAtZero to bill them at zero`} where id = ${runId}`;
        return;
      }
    }
    if (lines.count === 0) {
      await sql`update billing_runs set status = 'failed', error = 'nothing_to_bill: no entry qualified when the run was allocated' where id = ${runId}`;
      return;
    }
    await sql`
      update time_entries e set billed = true, billing_run_id = ${runId}
      from billing_run_entries l where l.run_id = ${runId} and l.entry_id = e.id`;
    step(ctx, 'allocate:entries');

    const formats: DocumentFormat[] = ctx.pdf ? ['html', 'csv', 'pdf'] : ['html', 'csv'];
    const sheets = await createTimesheets(sql, runId, run.workspaceId, Number(run.periodStart.slice(0, 4)), formats);
    await fixTimesheetDetails(sql, runId);
    step(ctx, 'allocate:timesheets');

    for (const sheetId of sheets) {
      for (const format of formats) {
        await enqueue(sql, renderJob, { workspaceId: run.workspaceId, timesheetId: sheetId, format });
      }
    }
    await sql`update billing_runs set status = 'rendering', allocated_at = ${ctx.now()} where id = ${runId}`;
    step(ctx, 'allocate:enqueued');
  });
  return { runId };
}

/**
 * The run's timesheets, numbered in a stable order (client code, then project key) so a retried
 * allocation gives every timesheet the same number. The client's tax and payment terms are fixed
 * on the timesheet (issue 23): the due date is the run's day plus the terms; so are whether it is
 * held for review (the client's `delivery`) and the voided number it replaces. Returns their ids in that order.
 */
async function createTimesheets(sql: Db, runId: string, workspaceId: string, year: number, formats: DocumentFormat[]): Promise<string[]> {
  const groups = await sql<{ clientId: string; code: string; projectId: string | null }[]>`
    select distinct l.client_id as "clientId", c.code, case when c.timesheet_layout = 'project' then l.project_id end as "projectId",
           case when c.timesheet_layout = 'project' then pr.key end as "projectKey"
    from billing_run_entries l join clients c on c.id = l.client_id join projects pr on pr.id = l.project_id
    where l.run_id = ${runId}
    order by c.code, "projectKey" nulls first`;
  const ids: string[] = [];
  for (const g of groups) {
    const [counter] = await sql<{ n: number }[]>`
      insert into document_counters (client_id, year, last_number) values (${g.clientId}, ${year}, 1)
      on conflict (client_id, year) do update set last_number = document_counters.last_number + 1
      returning last_number as n`;
    const number = `${g.code}-${year}-${String(counter!.n).padStart(4, '0')}`;
    const [sheet] = await sql<{ id: string }[]>`
      insert into timesheets (workspace_id, run_id, client_id, project_id, scope, number, version, formats, tax_rate_bp, tax_label, tax_note, due_on,
                              review, replaces_number)
      select ${workspaceId}, ${runId}, ${g.clientId}, ${g.projectId}, ${g.projectId ? 'project' : 'combined'}, ${number}, 1, ${formats}::text[],
             c.tax_rate_bp, c.tax_label, c.tax_note, (r.created_at at time zone 'UTC')::date + c.payment_terms_days,
             c.delivery = 'review', (${replacedNumber(sql, g.clientId, g.projectId)})
      from clients c, billing_runs r where c.id = ${g.clientId} and r.id = ${runId}
      returning id`;
    ids.push(sheet!.id);
  }
  return ids;
}

/**
 * The number a new timesheet of this client (and project, for a project-scope one) replaces, as
 * SQL over the run `r`: the latest first-version timesheet of the same client, scope and period
 * whose run was voided after it was released to the client (not held for review, or approved),
 * and that nothing replaces yet. A replacement that was itself voided before its release never
 * reached the client, so it does not count: a client who received 0001 and then 0003 reads
 * "replaces 0001", the number they know. Null when there is none.
 */
function replacedNumber(sql: Db, clientId: string, projectId: string | null) {
  return sql`
    select v.number from timesheets v join billing_runs vr on vr.id = v.run_id
    where v.client_id = ${clientId} and v.project_id is not distinct from ${projectId}::uuid and v.version = 1
      and vr.period_id = r.period_id and vr.status = 'voided' and (not v.review or vr.approved_at is not null)
      and not exists (select 1 from timesheets x join billing_runs xr on xr.id = x.run_id
                      where x.client_id = v.client_id and x.replaces_number = v.number
                        and (xr.status <> 'voided' or not x.review or xr.approved_at is not null))
    order by v.number desc limit 1`;
}
