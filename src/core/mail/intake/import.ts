import type postgres from 'postgres';
import { isConnectionError, type Db } from '../../../db/connect.ts';
import { storableText } from '../../input.ts';
import { jobTx, type JobCtx } from '../../jobs/ctx.ts';
import { holdTickets } from '../../tickets/concurrency.ts';
import { droppedNote, fit, MAX_COMMENT, MAX_DESCRIPTION, messageText, ticketTitle, visibleReply } from './body.ts';
import { addressOf, noiseReason, type OwnAddresses } from './noise.ts';
import { parseMessage, type IntakeLimits, type ParsedMessage } from './parse.ts';
import { dedupeKey, header, oversizeKey, ownMessageId, readRaw, type RawMessage } from './raw.ts';
import { audienceOf, replyAccess } from './reply.ts';
import { ensureSender, findSender, STORABLE_ADDRESS, type Sender } from './sender.ts';
import { findThread, type Thread } from './thread.ts';
import { judgeSender, noteVerdict, type SenderTrust, type TrustSettings } from './trust.ts';
import { verifyDkim } from './verify.ts';
import { insertAttachments, insertComment, insertInboxTicket } from './write.ts';

/** A message as the poll fetched it. `source` is null for one over the size limit (only its headers were read). */
export interface FetchedMessage {
  uid: number;
  uidValidity: string;
  size: number;
  receivedAt: Date;
  source: Buffer | null;
  headerBlock: Buffer | null;
}

/** The mailbox a message came from, as the intake needs it. */
export interface IntakeMailbox {
  id: string;
  workspaceId: string;
  own: OwnAddresses;
  /** What may prove a sender (trust.ts). */
  trust: TrustSettings;
}

export type IntakeStatus = 'imported' | 'reply' | 'ignored' | 'quarantined';

/** What became of a message; `duplicate`: its dedupe key was recorded before, nothing was written. */
export interface IntakeOutcome {
  status: IntakeStatus | 'duplicate';
  reason: string | null;
  ticketId: string | null;
  commentId: string | null;
}

const outcome = (status: IntakeStatus, reason: string | null = null, ticketId: string | null = null, commentId: string | null = null): IntakeOutcome => ({
  status,
  reason,
  ticketId,
  commentId,
});

const DUPLICATE: IntakeOutcome = { status: 'duplicate', reason: null, ticketId: null, commentId: null };

/** Error text for the log and `lastError`: the message, storable, at most 1,900 characters (a reason keeps 2,000). */
export const errorText = (err: unknown) => storableText(err instanceof Error ? err.message : String(err), 1900) || 'unknown error';

/** Errors that say nothing about the message (a lost connection, a lost race): the poll stops and reads it again next time. */
const retryLater = (err: unknown) => isConnectionError(err) || (err instanceof Error && ['40001', '40P01'].includes(String((err as { code?: unknown }).code)));

/**
 * Handles one message, exactly once: in ONE transaction its dedupe key is recorded (a key seen
 * before ends it: `duplicate`), then the message is judged and what it becomes is written: a
 * ticket, a comment, or nothing (ignored, quarantined), with the intake log row. A message that
 * cannot be parsed, or whose ticket or comment cannot be written (rolled back to a savepoint), is
 * quarantined with the error text; one whose transaction fails anywhere else is quarantined by a
 * minimal row (inOwnTransaction). Only a lost connection or race is thrown (the poll stops and the
 * message is read again next time, when its key tells).
 */
export async function intakeMessage(ctx: JobCtx, mailbox: IntakeMailbox, msg: FetchedMessage, limits: IntakeLimits): Promise<IntakeOutcome> {
  if (!msg.source) {
    const raw = readRaw(msg.headerBlock ?? Buffer.alloc(0));
    const messageId = ownMessageId(raw);
    const key = oversizeKey(raw, messageId, msg.size);
    return inOwnTransaction(ctx, mailbox, msg, key, (sql) =>
      record(sql, mailbox, msg, raw, { key, messageId, parsed: null }, async () =>
        outcome('quarantined', `too_large: ${msg.size} bytes, over the ${limits.maxMessageBytes}-byte limit`),
      ),
    );
  }
  const raw = readRaw(msg.source);
  const messageId = ownMessageId(raw);
  const key = dedupeKey(raw, messageId);
  // a message read again (a rescan, a retry after a crash) is known by its key: spare the parse
  const [known] = await ctx.sql`select 1 from intake_messages where workspace_id = ${mailbox.workspaceId} and dedupe_key = ${key}`;
  if (known) return DUPLICATE;
  let parsed: ParsedMessage | null = null;
  let parseError: unknown = null;
  try {
    parsed = await parseMessage(msg.source, limits);
  } catch (err) {
    parseError = err;
  }
  // DNS answers may take seconds: the signature is checked before the message's transaction opens
  const dkim = parsed?.from ? await verifyDkim(msg.source, raw, parsed.from.address, mailbox.trust.resolver) : null;
  return inOwnTransaction(ctx, mailbox, msg, key, (sql) =>
    record(sql, mailbox, msg, raw, { key, messageId, parsed }, async (sql) => {
      if (!parsed) return outcome('quarantined', `unparseable: ${errorText(parseError)}`);
      const from = parsed.from && STORABLE_ADDRESS.test(parsed.from.address) ? parsed.from : null;
      const noise = noiseReason(raw, mailbox.own, from?.address.toLowerCase() ?? addressOf(header(raw, 'from')));
      if (noise) return outcome('ignored', noise);
      if (!from) return outcome('quarantined', 'no_sender: the message names no sender address');
      const sender = await findSender(sql, mailbox.workspaceId, from);
      const trust = await judgeSender(sql, mailbox.workspaceId, { source: msg.source!, raw, from: sender.email }, mailbox.trust, dkim!);
      await noteVerdict(sql, mailbox.workspaceId, key, trust.verdict);
      let thread = await findThread(sql, mailbox.workspaceId, raw, parsed.subject);
      // a reply address sent with a timesheet names it, whatever the reply's headers kept
      if (thread.kind === 'none' && trust.token?.timesheetNumber) thread = { kind: 'timesheet', number: trust.token.timesheetNumber };
      const write = thread.kind === 'ticket' ? reply : newTicket;
      try {
        return await (sql as unknown as postgres.TransactionSql).savepoint((sp) =>
          write(sp as unknown as Db, ctx.now(), mailbox.workspaceId, { sender, trust }, parsed, thread, limits),
        );
      } catch (err) {
        if (retryLater(err)) throw err;
        ctx.log.warn({ mailboxId: mailbox.id, uid: msg.uid, err: errorText(err) }, 'mail intake: message quarantined');
        return outcome('quarantined', `${thread.kind === 'ticket' ? 'comment_failed' : 'ticket_failed'}: ${errorText(err)}`);
      }
    }),
  );
}

/**
 * Runs the message's one transaction (`attempt`: its log row and what it becomes). When that fails
 * for a reason of the message's own, anywhere (the log row, the judging, the outcome), all of it
 * is rolled back and the message is quarantined, in a transaction of its own, by a minimal row
 * that can always be written: UID, UIDVALIDITY, size, dedupe key and the reason, nothing the
 * message says. So no message blocks the ones behind it; only when not even that row can be
 * written is the error thrown (the poll names the message in `lastError`).
 */
async function inOwnTransaction(
  ctx: JobCtx,
  mailbox: IntakeMailbox,
  msg: FetchedMessage,
  key: string,
  attempt: (sql: Db) => Promise<IntakeOutcome>,
): Promise<IntakeOutcome> {
  try {
    return await jobTx(ctx, (ctx) => attempt(ctx.sql));
  } catch (err) {
    if (retryLater(err)) throw err;
    ctx.log.warn({ mailboxId: mailbox.id, uid: msg.uid, err: errorText(err) }, 'mail intake: message could not be stored, quarantined');
    const reason = `store_failed: ${errorText(err)}`;
    return jobTx(ctx, async ({ sql }) => {
      const [row] = await sql`
        insert into intake_messages (workspace_id, mailbox_id, dedupe_key, received_at, status, reason, uid_validity, uid, size)
        values (${mailbox.workspaceId}, ${mailbox.id}, ${key}, ${msg.receivedAt}, 'quarantined', ${reason}, ${msg.uidValidity}::bigint, ${msg.uid}, ${msg.size})
        on conflict (workspace_id, dedupe_key) do nothing
        returning id`;
      return row ? outcome('quarantined', reason) : DUPLICATE;
    });
  }
}

/** The most the log keeps of what a message says (RFC 5322 lines hold 998 characters; an address 320). */
const LOG_MAX = { address: 320, subject: 998, messageId: 900, reason: 2000 };

/** Claims the message's dedupe key with its log row, judges it, and records the outcome on the row. */
async function record(
  sql: Db,
  mailbox: IntakeMailbox,
  msg: FetchedMessage,
  raw: RawMessage,
  m: { key: string; messageId: string | null; parsed: ParsedMessage | null },
  judge: (sql: Db) => Promise<IntakeOutcome>,
): Promise<IntakeOutcome> {
  const from = m.parsed?.from?.address ?? addressOf(header(raw, 'from'));
  const subject = m.parsed?.subject ?? header(raw, 'subject') ?? '';
  const messageId = m.messageId === null ? null : storableText(m.messageId, LOG_MAX.messageId);
  // The unique key also makes a second poll of the same message (were two ever to overlap) wait here, then find it taken.
  const [row] = await sql<{ id: string }[]>`
    insert into intake_messages (workspace_id, mailbox_id, dedupe_key, message_id, from_address, subject, received_at, status,
                                 uid_validity, uid, size, source)
    values (${mailbox.workspaceId}, ${mailbox.id}, ${m.key}, ${messageId}, ${from === null ? null : storableText(from, LOG_MAX.address)},
            ${storableText(subject, LOG_MAX.subject)},
            ${msg.receivedAt}, 'quarantined', ${msg.uidValidity}::bigint, ${msg.uid}, ${msg.size}, ${msg.source})
    on conflict (workspace_id, dedupe_key) do nothing
    returning id`;
  if (!row) return DUPLICATE;
  const result = await judge(sql);
  await sql`
    update intake_messages set status = ${result.status}, reason = ${result.reason === null ? null : storableText(result.reason, LOG_MAX.reason)},
                               ticket_id = ${result.ticketId}, comment_id = ${result.commentId}
    where id = ${row.id}`;
  return result;
}

/** The sender as found, and what proves them. */
interface From {
  sender: Sender;
  trust: SenderTrust;
}

type Write = (sql: Db, now: Date, workspaceId: string, from: From, m: ParsedMessage, thread: Thread, limits: IntakeLimits) => Promise<IntakeOutcome>;

/** Text as Markdown inline code: whatever a header says stays text. */
const code = (text: string) => `\`${text.replace(/[`\r\n]/g, "'")}\``;

/** A workspace user (or a person with a login) whose message proves nothing may not act as them: the message is an outsider's. */
const unverified = ({ sender, trust }: From) => sender.guarded && trust.proof === null;

/**
 * New mail: an Inbox ticket reported by the sender (created when unknown), with the message's
 * attachments. A guarded address that is not proven opens it as an unverified outside sender: no
 * reporter, nothing attributed to anyone, the address and the verdict at the top of the description.
 */
const newTicket: Write = async (sql, now, workspaceId, from, m, thread, limits) => {
  const s = unverified(from) ? null : await ensureSender(sql, workspaceId, from.sender);
  const lead =
    (s ? '' : `_Unverified sender:_ ${code(`${m.from?.name ?? ''} <${from.sender.email}>`.trim())} (${code(from.trust.verdict)})\n\n`) +
    (thread.kind === 'timesheet' ? `_In reply to timesheet ${thread.number}._\n\n` : '');
  const note = droppedNote(m.dropped, limits.maxAttachmentBytes, limits.maxAttachments);
  const room = MAX_DESCRIPTION - Array.from(lead + note).length;
  const reporterId = s?.identityId ?? null;
  const ticketId = await insertInboxTicket(
    sql,
    { workspaceId, reporterId, title: ticketTitle(m.subject), description: lead + fit(messageText(m), room) + note },
    now,
  );
  await insertAttachments(sql, { workspaceId, ticketId, commentId: null, audience: s ? audienceOf(s) : 'client', uploadedBy: reporterId }, m.attachments, now);
  return outcome('imported', null, ticketId);
};

/**
 * A reply: a comment on the ticket with the quoted history and signature trimmed, when the sender
 * already sees the ticket or answered a reply address we sent them for it (replyAccess); otherwise
 * quarantined, never attached to a ticket they cannot see. An unproven message from a guarded
 * address is quarantined: it may not speak as that person.
 */
const reply: Write = async (sql, now, workspaceId, from, m, thread, limits) => {
  if (thread.kind !== 'ticket') throw new Error('a reply needs a ticket');
  if (unverified(from)) return outcome('quarantined', `sender_unverified: ${from.trust.verdict}`);
  const ticket = { id: thread.ticketId, workspaceId };
  await holdTickets(sql, [ticket.id]);
  const access = await replyAccess(sql, ticket.id, from.sender, from.trust.token?.ticketId ?? null);
  if (access === 'refused') return outcome('quarantined', 'sender_cannot_see_ticket: the sender may not see the ticket this message answers');
  const s = await ensureSender(sql, workspaceId, from.sender);
  const audience = audienceOf(s);
  const note = droppedNote(m.dropped, limits.maxAttachmentBytes, limits.maxAttachments);
  const text = visibleReply(messageText(m)) || '_(no text)_';
  const body = fit(text, MAX_COMMENT - Array.from(note).length) + note;
  const commentId = await insertComment(sql, { workspaceId, ticketId: ticket.id, authorId: s.identityId, audience, body }, now);
  await insertAttachments(sql, { workspaceId, ticketId: ticket.id, commentId, audience, uploadedBy: s.identityId }, m.attachments, now);
  return outcome('reply', null, ticket.id, commentId);
};
