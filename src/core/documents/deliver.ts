import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/connect.ts';
import { isLastAttempt, jobTx, step, type JobCtx, type JobRefs } from '../jobs/ctx.ts';
import { firstAddress, singleAddress } from '../mail/address.ts';
import type { SendResult, SendStep } from '../mail/mailer.ts';
import { timesheetReplyAddress } from '../mail/intake/reply-token.ts';
import { fromWithName } from '../mail/workspace-sender.ts';
import { deliveryEmail, voidNoticeEmail, type DeliverySheet } from './delivery-email.ts';
import { finishDelivery, mayHaveLeft, settleStopped, STOPPED_AFTER_DATA, type FinalState } from './stopped-deliveries.ts';
import type { DocumentFormat } from './timesheet-model.ts';

interface DeliveryRow {
  state: string;
  /** A timesheet email, or the notice that its run was voided (issue 23). */
  kind: 'timesheet' | 'void_notice';
  email: string | null;
  wasSending: boolean;
  smtpStep: SendStep | null;
  optedOut: boolean;
  timesheetId: string;
  workspaceId: string;
  number: string;
  runId: string;
  runStatus: string;
  clientName: string;
  locale: string;
  agency: string;
  /** The workspace's sender name (its settings), shown with MAIL_FROM's address. */
  mailFromName: string | null;
  /** The workspace's reply-to (its settings), offered beside the recipient's own reply address. */
  mailReplyTo: string | null;
  periodStart: string;
  periodEnd: string;
  replacesNumber: string | null;
}

/** What the first transaction decided: nothing left to do, wait for a re-rendered version, or send this email. */
type Claim =
  | { kind: 'done' }
  | { kind: 'wait' }
  | {
      kind: 'send';
      notice: boolean;
      runId: string;
      timesheetId: string;
      email: string;
      messageId: string;
      attempt: number;
      sheet: DeliverySheet;
      senderName: string | null;
      workspaceReplyTo: string | null;
    };

/**
 * The `documents:deliver` job: sends one timesheet (its pdf or html, and its csv, in one email)
 * to one billing recipient, at most once; or, for a `void_notice` delivery, the short notice that
 * the timesheet it received was voided, under the same rules. The Message-ID is stored and the attempt marked
 * (`sending_at`, its number in `attempts`) in a transaction committed before the message goes
 * out, and each SMTP step is committed (`smtp_step`) before the mailer goes past it. A retry
 * after a crash mid-send finds the mark: if the dead attempt had reached `data` the server may
 * have the message and the delivery is `unknown`; before that nothing left, and the email is
 * sent again with the same Message-ID. The outcome is recorded in a second transaction with the
 * run's progress, by the attempt that still holds the mark. A temporary refusal keeps the
 * delivery `pending` and throws, so graphile-worker retries with backoff, until the last attempt
 * records `failed`. A job that cannot run again is settled by abandoned-deliveries.ts.
 */
export async function deliverTimesheet(ctx: JobCtx, { deliveryId }: { deliveryId: string }): Promise<JobRefs> {
  const final = isLastAttempt(ctx);
  const claim = await jobTx(ctx, (ctx) => claimDelivery(ctx, deliveryId, final));
  if (claim.kind === 'wait') throw new Error('The timesheet was superseded (a redaction) and its new version is not rendered yet; retrying later.');
  if (claim.kind === 'done') return { deliveryId };
  const { runId, sheet, attempt } = claim;
  const refs = { deliveryId, runId, timesheetId: claim.timesheetId };
  // the recipient's own reply address: a reply to it is known to be theirs (issue 19)
  const own = await timesheetReplyAddress(ctx.sql, ctx.mailFrom, { timesheetId: claim.timesheetId, deliveryId, email: claim.email });
  // the agency's chosen reply address first, and the recipient's own one, whose replies are proven theirs
  const replyTo = [claim.workspaceReplyTo, own].filter((a) => a).join(', ') || null;
  const from = fromWithName(ctx.mailFrom, claim.senderName);
  const envelope = { from, to: claim.email, messageId: claim.messageId, replyTo };
  const mail = claim.notice ? voidNoticeEmail(sheet, envelope) : deliveryEmail(sheet, envelope);
  // A mailer that throws may have sent the message or not: the same doubt as a connection lost after DATA.
  const result = await ctx.mailer
    .send(mail, (s) => recordStep(ctx, deliveryId, attempt, s))
    .catch((err: unknown): SendResult => ({ outcome: 'unknown', reply: errorText(err) }));
  step(ctx, 'deliver:sent');
  const retry = result.outcome === 'temporary' && !final;
  const recorded = await jobTx(ctx, async (ctx) => {
    const now = ctx.now();
    // Another attempt took the delivery over (this worker was presumed dead): its outcome is that attempt's to record.
    if (!(await holdsMark(ctx, deliveryId, attempt))) return false;
    if (retry) {
      await ctx.sql`
        update document_deliveries set sending_at = null, detail = ${result.reply}, attempted_at = ${now}, updated_at = ${now}
        where id = ${deliveryId}`;
    } else {
      await finishDelivery(ctx.sql, deliveryId, runId, STATE_OF[result.outcome], result.reply, now);
    }
    step(ctx, 'deliver:recorded');
    return true;
  });
  if (recorded && retry) throw new Error(`Temporary SMTP failure, retrying: ${result.reply}`);
  return refs;
}

/**
 * Called by the job adapter when an attempt throws: on the last attempt the delivery is settled
 * at once by how far the attempt got (its job will not run again), rather than by the sweep.
 */
export async function deliveryAttemptFailed(ctx: JobCtx, { deliveryId }: { deliveryId: string }, error: string): Promise<void> {
  if (!isLastAttempt(ctx)) return;
  const why = `The delivery job's last attempt failed (${error})`;
  await jobTx(ctx, (ctx) => settleStopped(ctx.sql, deliveryId, why, ctx.now()));
}

/**
 * Commits how far the conversation got before the mailer goes past it, as long as this attempt
 * still holds the delivery; otherwise the mailer stops before the data, so a worker presumed dead
 * and the attempt that took over cannot both send.
 */
async function recordStep(ctx: JobCtx, deliveryId: string, attempt: number, smtpStep: SendStep): Promise<void> {
  const rows = await ctx.sql`
    update document_deliveries set smtp_step = ${smtpStep}, updated_at = ${ctx.now()}
    where id = ${deliveryId} and state = 'pending' and sending_at is not null and attempts = ${attempt}
    returning id`;
  if (rows.length === 0) throw new Error('Another attempt took this delivery over.');
}

/** Locks the delivery and tells whether this attempt's mark is still on it. */
async function holdsMark(ctx: JobCtx, deliveryId: string, attempt: number): Promise<boolean> {
  const rows = await ctx.sql`
    select 1 from document_deliveries
    where id = ${deliveryId} and state = 'pending' and sending_at is not null and attempts = ${attempt}
    for update`;
  return rows.length > 0;
}

const STATE_OF: Record<SendResult['outcome'], FinalState> = { accepted: 'sent', rejected: 'failed', temporary: 'failed', unknown: 'unknown' };

/**
 * Under the delivery's row lock: a delivery no longer pending is done; one whose run was voided,
 * whose recipient opted out since, or which an earlier attempt left after its message data may
 * have gone is settled here; otherwise (an attempt left before the data is sent again, with the
 * same Message-ID) the documents are read and the attempt is marked with its Message-ID.
 */
async function claimDelivery(ctx: JobCtx, deliveryId: string, final: boolean): Promise<Claim> {
  const { sql } = ctx;
  const now = ctx.now();
  const [d] = await sql<DeliveryRow[]>`
    select dd.state, dd.kind, dd.email, dd.sending_at is not null as "wasSending", dd.smtp_step as "smtpStep", coalesce(rc.opted_out, false) as "optedOut",
           s.id as "timesheetId", s.workspace_id as "workspaceId", s.number, s.run_id as "runId", r.status as "runStatus",
           c.name as "clientName", c.locale, w.name as agency, w.mail_from_name as "mailFromName", w.mail_reply_to as "mailReplyTo",
           s.replaces_number as "replacesNumber", p.period_start::text as "periodStart", p.period_end::text as "periodEnd"
    from document_deliveries dd
    join timesheets s on s.id = dd.timesheet_id
    join billing_runs r on r.id = s.run_id
    join periods p on p.id = r.period_id
    join clients c on c.id = s.client_id
    join workspaces w on w.id = s.workspace_id
    left join client_billing_recipients rc on rc.id = dd.recipient_id
    where dd.id = ${deliveryId}
    for update of dd`;
  if (!d || d.state !== 'pending') return { kind: 'done' };
  const settle = async (state: FinalState, detail: string): Promise<Claim> => {
    await finishDelivery(sql, deliveryId, d.runId, state, detail, now);
    return { kind: 'done' };
  };
  const notice = d.kind === 'void_notice';
  if (d.runStatus === 'voided' && !notice) return settle('skipped', 'The billing run was voided before sending.');
  if (mayHaveLeft(d)) return settle('unknown', STOPPED_AFTER_DATA);
  if (d.optedOut) return settle('skipped', 'The recipient opted out of timesheet emails.');
  if (!d.email) return settle('skipped', 'The recipient has no email address.');
  // a list or a line break would reach more people than the one recipient (written before the check, or past it)
  if (!singleAddress(d.email)) return settle('failed', 'The recipient address is not exactly one email address; not sent.');
  const files = notice ? [] : await currentFiles(sql, d);
  if (!files) return final ? settle('failed', 'The timesheet was superseded and its new version was not rendered in time.') : { kind: 'wait' };
  step(ctx, 'deliver:loaded');
  const [claimed] = await sql<{ messageId: string; attempt: number }[]>`
    update document_deliveries
    set message_id = coalesce(message_id, ${newMessageId(ctx.mailFrom)}), sending_at = ${now}, smtp_step = null,
        attempts = attempts + 1, attempted_at = ${now}, updated_at = ${now}
    where id = ${deliveryId}
    returning message_id as "messageId", attempts as attempt`;
  step(ctx, 'deliver:claimed');
  const sheet: DeliverySheet = { ...pick(d), files };
  return {
    kind: 'send',
    notice,
    runId: d.runId,
    timesheetId: d.timesheetId,
    email: d.email,
    messageId: claimed!.messageId,
    attempt: claimed!.attempt,
    sheet,
    // the client knows the agency by its name: the workspace's, unless its settings name the sender otherwise (issue 23)
    senderName: d.mailFromName ?? d.agency,
    workspaceReplyTo: d.mailReplyTo,
  };
}

/**
 * The files to attach, from the timesheet's current version: after a redaction the email
 * carries the new version (same number), never the redacted one. Null while that version is
 * not wholly rendered.
 */
async function currentFiles(sql: Db, d: DeliveryRow): Promise<DeliverySheet['files'] | null> {
  const [sheet] = await sql<{ id: string; formats: DocumentFormat[] }[]>`
    select id, formats from timesheets where workspace_id = ${d.workspaceId} and number = ${d.number} order by version desc limit 1`;
  if (!sheet) return null;
  const main: DocumentFormat = sheet.formats.includes('pdf') ? 'pdf' : 'html';
  const wanted = [main, 'csv' as const].filter((f) => sheet.formats.includes(f));
  const files = await sql<{ format: DocumentFormat; content: Buffer }[]>`
    select format, content from documents where timesheet_id = ${sheet.id} and format = any(${wanted}::text[]) and content is not null
    order by format desc`;
  return files.length === wanted.length ? [...files] : null;
}

const pick = ({ number, clientName, locale, agency, periodStart, periodEnd, replacesNumber }: DeliveryRow) => ({
  number,
  clientName,
  locale,
  agency,
  periodStart,
  periodEnd,
  replacesNumber,
});

/** `<uuid@domain of MAIL_FROM>`: ours, unique, and stored before the first attempt. */
function newMessageId(mailFrom: string): string {
  const domain = firstAddress(mailFrom)?.split('@')[1] || 'localhost';
  return `<${randomUUID()}@${domain}>`;
}

const errorText = (err: unknown) => `The mailer failed: ${err instanceof Error ? err.message : String(err)}`.slice(0, 1000);
