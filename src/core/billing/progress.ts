import type { Db } from '../../db/connect.ts';
import { deliverJob } from '../jobs/catalog.ts';
import { enqueue } from '../jobs/enqueue.ts';
import { advanceRun } from './advance.ts';

/**
 * The job that sends one delivery; keyed by it, so it is never queued twice. A resend (`fresh`)
 * replaces whatever job the key still names (one out of attempts after a killed worker).
 */
export async function enqueueDelivery(sql: Db, delivery: { id: string; workspaceId: string }, fresh = false): Promise<void> {
  await enqueue(sql, deliverJob, { workspaceId: delivery.workspaceId, deliveryId: delivery.id }, { fresh });
}

/**
 * Called in the transaction that wrote a document: once every format of the timesheet exists,
 * its deliveries are created (see `createDeliveries`) unless the timesheet is held for review and
 * its run not yet approved (the approval creates them: billing/approve.ts). Only a timesheet's
 * first version is delivered: a redaction's new version replaces the file, not the email the
 * client already has. Then the run advances.
 */
export async function timesheetRendered(sql: Db, timesheetId: string, now: Date): Promise<void> {
  const [sheet] = await sql<{ runId: string; complete: boolean; version: number; voided: boolean; held: boolean }[]>`
    select s.run_id as "runId", s.version, r.status = 'voided' as voided, s.review and r.approved_at is null as held,
           (select count(*) from documents d where d.timesheet_id = s.id) >= cardinality(s.formats) as complete
    from timesheets s join billing_runs r on r.id = s.run_id where s.id = ${timesheetId}`;
  if (!sheet) return;
  if (sheet.complete && sheet.version === 1 && !sheet.voided && !sheet.held) await createDeliveries(sql, timesheetId, now);
  await advanceRun(sql, sheet.runId, now);
}

/**
 * The deliveries of one timesheet: one per billing recipient of the client (`skipped` at once for
 * a recipient who opted out or has no address) and a job for each pending one. Idempotent: the
 * unique (timesheet, recipient) key and the job keys make a second call add nothing.
 */
export async function createDeliveries(sql: Db, timesheetId: string, now: Date): Promise<void> {
  const created = await sql<{ id: string; workspaceId: string; state: string }[]>`
    insert into document_deliveries (workspace_id, timesheet_id, recipient_id, email, state, detail, attempted_at, updated_at)
    select s.workspace_id, s.id, r.id, nullif(trim(r.email), ''),
           case when r.opted_out or nullif(trim(r.email), '') is null then 'skipped' else 'pending' end,
           case when r.opted_out then 'The recipient opted out of timesheet emails.'
                when nullif(trim(r.email), '') is null then 'The recipient has no email address.' end,
           case when r.opted_out or nullif(trim(r.email), '') is null then ${now}::timestamptz end,
           ${now}
    from timesheets s join client_billing_recipients r on r.client_id = s.client_id
    where s.id = ${timesheetId}
    order by r.created_at, r.id
    on conflict (timesheet_id, recipient_id) where kind = 'timesheet' do nothing
    returning id, workspace_id as "workspaceId", state`;
  for (const d of created) if (d.state === 'pending') await enqueueDelivery(sql, d);
}

/**
 * After a run was voided (in the caller's transaction): a notice to each recipient who received
 * one of its timesheets, or may have (`sent`, `unknown`), naming the voided number. A delivery,
 * `kind: void_notice`, sent by the same job with the same tracking and retries; one per delivery
 * it follows (`notice_of` is unique), so calling this again adds nothing. Also called when a
 * delivery of an already voided run settles as sent (it was under way when the run was voided).
 */
export async function createVoidNotices(sql: Db, runId: string, now: Date): Promise<void> {
  const created = await sql<{ id: string; workspaceId: string }[]>`
    insert into document_deliveries (workspace_id, timesheet_id, recipient_id, email, state, kind, notice_of, updated_at)
    select dd.workspace_id, dd.timesheet_id, dd.recipient_id, dd.email, 'pending', 'void_notice', dd.id, ${now}
    from document_deliveries dd join timesheets s on s.id = dd.timesheet_id join billing_runs r on r.id = s.run_id
    where s.run_id = ${runId} and r.status = 'voided' and dd.kind = 'timesheet' and dd.state in ('sent', 'unknown')
    order by dd.created_at, dd.id
    on conflict (notice_of) do nothing
    returning id, workspace_id as "workspaceId"`;
  for (const d of created) await enqueueDelivery(sql, d);
}
