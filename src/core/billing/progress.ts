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
 * its deliveries are created (one per billing recipient of the client; `skipped` at once for a
 * recipient who opted out or has no address) and a job is queued for each pending one. Only a
 * timesheet's first version is delivered: a redaction's new version replaces the file, not the
 * email the client already has. Idempotent: the unique (timesheet, recipient) key and the job
 * keys make a second call add nothing. Then the run advances.
 */
export async function timesheetRendered(sql: Db, timesheetId: string, now: Date): Promise<void> {
  const [sheet] = await sql<{ runId: string; complete: boolean; version: number; voided: boolean }[]>`
    select s.run_id as "runId", s.version, r.status = 'voided' as voided,
           (select count(*) from documents d where d.timesheet_id = s.id) >= cardinality(s.formats) as complete
    from timesheets s join billing_runs r on r.id = s.run_id where s.id = ${timesheetId}`;
  if (!sheet) return;
  if (sheet.complete && sheet.version === 1 && !sheet.voided) {
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
      on conflict (timesheet_id, recipient_id) do nothing
      returning id, workspace_id as "workspaceId", state`;
    for (const d of created) if (d.state === 'pending') await enqueueDelivery(sql, d);
  }
  await advanceRun(sql, sheet.runId, now);
}
