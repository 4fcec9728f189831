import type { Db } from '../../db/connect.ts';
import { advanceRun } from '../billing/advance.ts';
import type { SendStep } from '../mail/mailer.ts';

export type FinalState = 'sent' | 'failed' | 'skipped' | 'unknown';

/** The detail of a delivery whose attempt stopped after its message data may have reached the server. */
export const STOPPED_AFTER_DATA = 'The previous attempt stopped while sending; not re-sent automatically.';

/**
 * The one rule for an attempt that stopped without recording its outcome (a killed worker): the
 * message may have left only if the attempt had marked the delivery and reached the `data` step
 * (committed before the first byte of the message). Before that the server cannot hold it.
 */
export const mayHaveLeft = (d: { wasSending: boolean; smtpStep: SendStep | null }) => d.wasSending && d.smtpStep === 'data';

/** Records a final state (and the run's progress) in the caller's transaction. */
export async function finishDelivery(sql: Db, deliveryId: string, runId: string, state: FinalState, detail: string, now: Date): Promise<void> {
  await sql`
    update document_deliveries set state = ${state}, detail = ${detail}, sending_at = null, attempted_at = ${now}, updated_at = ${now}
    where id = ${deliveryId}`;
  await advanceRun(sql, runId, now);
}

/**
 * Settles a pending delivery whose job will not run again, in the caller's transaction: `unknown`
 * when its last attempt may have sent the message, else `failed` (nothing left: the operator may
 * resend), `skipped` for a voided run's timesheet email (its void notice is still owed). `why` opens the detail. Answers whether it settled one.
 */
export async function settleStopped(sql: Db, deliveryId: string, why: string, now: Date): Promise<boolean> {
  const [d] = await sql<{ state: string; detail: string | null; wasSending: boolean; smtpStep: SendStep | null; runId: string; voided: boolean }[]>`
    select dd.state, dd.detail, dd.sending_at is not null as "wasSending", dd.smtp_step as "smtpStep", s.run_id as "runId",
           r.status = 'voided' and dd.kind = 'timesheet' as voided
    from document_deliveries dd join timesheets s on s.id = dd.timesheet_id join billing_runs r on r.id = s.run_id
    where dd.id = ${deliveryId}
    for update of dd`;
  if (!d || d.state !== 'pending') return false;
  const [state, detail]: [FinalState, string] = d.voided
    ? ['skipped', 'The billing run was voided before sending.']
    : mayHaveLeft(d)
      ? ['unknown', `${why}; it had begun sending the message data, so the server may have the message. Not re-sent automatically.`]
      : ['failed', `${why}; the message was not sent${d.detail ? ` (last reply: ${d.detail})` : ''}.`];
  await finishDelivery(sql, deliveryId, d.runId, state, detail.slice(0, 2000), now);
  return true;
}
