import type { Db } from '../../db/connect.ts';
import { enqueue } from '../jobs/enqueue.ts';

/** Attempts of a delivery job before a temporary refusal becomes `failed`. */
export const DELIVERY_MAX_ATTEMPTS = 5;

/**
 * The job that sends one delivery; keyed by it, so it is never queued twice. A resend (`fresh`)
 * replaces whatever job the key still names (one out of attempts after a killed worker).
 */
export async function enqueueDelivery(sql: Db, deliveryId: string, fresh = false): Promise<void> {
  const [d] = await sql<{ workspaceId: string }[]>`select workspace_id as "workspaceId" from document_deliveries where id = ${deliveryId}`;
  await enqueue(
    sql,
    'documents:deliver',
    { workspaceId: d!.workspaceId, deliveryId },
    {
      jobKey: `documents:deliver:${deliveryId}`,
      maxAttempts: DELIVERY_MAX_ATTEMPTS,
      replaceKeyed: fresh,
    },
  );
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
    const created = await sql<{ id: string }[]>`
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
      returning id, state`;
    for (const d of created as unknown as { id: string; state: string }[]) if (d.state === 'pending') await enqueueDelivery(sql, d.id);
  }
  await advanceRun(sql, sheet.runId, now);
}

/**
 * Moves a run along its lifecycle from what exists: `rendering` until every document of its
 * first-version timesheets is written, then `delivering` while any delivery is pending, then
 * `completed`; a voided or failed run does not move. Under a lock on the run row, so two jobs
 * finishing together agree (`no key update`: writing a document already holds a key-share lock on
 * its run through the foreign key, and `for update` would deadlock two renders).
 */
export async function advanceRun(sql: Db, runId: string, now: Date): Promise<void> {
  // Lock first, count after: in READ COMMITTED a statement sees what was committed when it began,
  // so counts taken in the locking statement itself would miss the change of the transaction the
  // lock waited for, and two deliveries finishing together would each see the other still pending.
  const [locked] = await sql<{ status: string }[]>`select status from billing_runs where id = ${runId} for no key update`;
  if (!locked || !['rendering', 'delivering'].includes(locked.status)) return;
  const [run] = await sql<{ missing: number; pending: number }[]>`
    select (select coalesce(sum(cardinality(s.formats)), 0) from timesheets s where s.run_id = ${runId} and s.version = 1)::int
           - (select count(*) from documents d join timesheets s on s.id = d.timesheet_id where s.run_id = ${runId} and s.version = 1)::int as missing,
           (select count(*) from document_deliveries dd join timesheets s on s.id = dd.timesheet_id
            where s.run_id = ${runId} and dd.state = 'pending')::int as pending`;
  const next = run!.missing > 0 ? 'rendering' : run!.pending > 0 ? 'delivering' : 'completed';
  if (next === locked.status) return;
  await sql`
    update billing_runs set status = ${next}, completed_at = ${next === 'completed' ? now : null}::timestamptz
    where id = ${runId}`;
}
