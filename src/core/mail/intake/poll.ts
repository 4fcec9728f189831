import type { Db } from '../../../db/connect.ts';
import { storableText } from '../../input.ts';
import { step, type JobCtx } from '../../jobs/ctx.ts';
import type { SecretBox } from '../secret-box.ts';
import { replyParserGuarded } from './body.ts';
import type { ConnectImap, ImapQuery, ImapSession } from './imap.ts';
import { errorText, intakeMessage, type FetchedMessage, type IntakeMailbox, type IntakeOutcome } from './import.ts';
import { addressOf } from './noise.ts';
import { DEFAULT_LIMITS, type IntakeLimits } from './parse.ts';
import { passwordContext } from './present.ts';
import type { TrustSettings } from './trust.ts';
import { noDns, type DnsResolver } from './verify.ts';

/** UIDs whose size and date are asked for in one FETCH. */
const META_CHUNK = 200;
/**
 * Message sources fetched in one FETCH, at most this many bytes together (a larger message comes
 * alone): the poll holds one batch in memory at a time, so memory stays flat however full the folder.
 */
const BATCH_BYTES = 4 * 1024 * 1024;
const BATCH_MESSAGES = 100;

export interface PollOptions {
  /** The IMAP client, the worker's (src/jobs/machinery/imap.ts). */
  connect: ConnectImap;
  /** Opens the stored password; null when the process has no key (the poll fails with lastError saying so). */
  secrets: SecretBox | null;
  limits?: Partial<IntakeLimits>;
  /** DNS for the senders' DKIM keys (node's dns.promises.resolve at the edge); without one no signature proves a sender. */
  resolver?: DnsResolver;
}

export type PollCounts = Record<IntakeOutcome['status'], number>;

export type PollResult =
  | { mailboxId: string; status: 'skipped' }
  | { mailboxId: string; status: 'polled'; counts: PollCounts }
  | { mailboxId: string; status: 'failed'; error: string; counts: PollCounts };

interface PollMailbox {
  id: string;
  workspaceId: string;
  host: string;
  port: number;
  secure: boolean;
  username: string;
  passwordSealed: Buffer;
  folder: string;
  afterImport: 'seen' | 'move';
  moveTo: string | null;
  enabled: boolean;
  settingsVersion: number;
  uidValidity: string | null;
  lastUid: number;
  lastPollAt: Date | null;
  trustedAuthservId: string | null;
}

let warnedUnguarded = false;

/**
 * The `mail:poll` job: reads the new messages of one mailbox and hands each to the intake.
 * UID-based: only UIDs above the last handled one under the folder's UIDVALIDITY are read; when
 * the UIDVALIDITY is new (first poll, a re-created folder, changed settings) the folder is scanned
 * instead (rescanQuery), and the dedupe keys make that safe. UIDs are collected and
 * sources fetched first, then each message is acted on (imapflow deadlocks when commands run
 * inside a fetch iterator); after a message is handled it is flagged \Seen or moved, then the
 * position advances. A failure ends the poll with `lastError` recorded and nothing thrown, so the
 * next minute's poll (same job key) tries again; only a database that cannot record it throws.
 */
export async function pollMailbox(ctx: JobCtx, { mailboxId }: { mailboxId: string }, opts: PollOptions): Promise<PollResult> {
  const mb = await loadForPoll(ctx.sql, mailboxId.toLowerCase());
  if (!mb?.enabled) return { mailboxId, status: 'skipped' };
  if (!replyParserGuarded && !warnedUnguarded) {
    warnedUnguarded = true;
    ctx.log.warn('mail intake: the optional re2 package is not installed; quoted-reply trimming uses JavaScript regexes on at most 20,000 characters');
  }
  const limits = { ...DEFAULT_LIMITS, ...opts.limits };
  const counts: PollCounts = { imported: 0, reply: 0, ignored: 0, quarantined: 0, duplicate: 0 };
  const started = ctx.now();
  try {
    if (!opts.secrets) throw new Error('no secret key to open the mailbox password with: set WT_SECRET_KEY');
    const password = opts.secrets.open(mb.passwordSealed, passwordContext(mb.workspaceId));
    await readMailbox(ctx, opts.connect, mb, password, limits, counts, { resolver: opts.resolver ?? noDns, trustedAuthservId: mb.trustedAuthservId });
  } catch (err) {
    const error = describe(err);
    ctx.log.warn({ mailboxId, error, counts }, 'mailbox poll failed');
    await ctx.sql`update mailboxes set last_poll_at = ${started}, last_error = ${error} where id = ${mb.id} and settings_version = ${mb.settingsVersion}`;
    return { mailboxId, status: 'failed', error, counts };
  }
  await ctx.sql`update mailboxes set last_poll_at = ${started}, last_error = null where id = ${mb.id} and settings_version = ${mb.settingsVersion}`;
  // a line a minute per mailbox is noise when nothing came
  ctx.log[Object.values(counts).some((n) => n > 0) ? 'info' : 'debug']({ mailboxId, counts }, 'mailbox polled');
  return { mailboxId, status: 'polled', counts };
}

async function loadForPoll(sql: Db, id: string): Promise<PollMailbox | null> {
  const [row] = await sql<PollMailbox[]>`
    select id, workspace_id as "workspaceId", host, port, secure, username, password_sealed as "passwordSealed", folder,
           after_import as "afterImport", move_to as "moveTo", enabled, settings_version as "settingsVersion",
           uid_validity::text as "uidValidity", last_uid::int as "lastUid",
           last_poll_at as "lastPollAt", trusted_authserv_id as "trustedAuthservId"
    from mailboxes where id = ${id}`;
  return row ?? null;
}

/** An IMAP error as the mailbox's lastError: imapflow's message with the server's answer and code. */
function describe(err: unknown): string {
  const e = err as { message?: string; responseText?: string; serverResponseCode?: string; code?: string };
  const parts = [e.serverResponseCode ?? e.code, errorText(err), e.responseText].filter(Boolean);
  return storableText([...new Set(parts)].join(': '), 2000);
}

/** Runs a step of one message's handling; its failure names the message, so `lastError` says which one the poll stopped at. */
async function forMessage<T>(msg: FetchedMessage, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new Error(`message UID ${msg.uid} (UIDVALIDITY ${msg.uidValidity}): ${describe(err)}`, { cause: err });
  }
}

async function readMailbox(
  ctx: JobCtx,
  connect: ConnectImap,
  mb: PollMailbox,
  password: string,
  limits: IntakeLimits,
  counts: PollCounts,
  trust: TrustSettings,
): Promise<void> {
  const client = await connect(ctx, mb, password);
  try {
    if (mb.afterImport === 'move') await client.createFolder(mb.moveTo!);
    const folder = await client.openFolder(mb.folder);
    try {
      await readFolder(ctx, client, folder, mb, limits, counts, trust);
    } finally {
      folder.release();
    }
  } finally {
    await client.logout();
  }
}

async function readFolder(
  ctx: JobCtx,
  client: ImapSession,
  folder: { uidValidity: string; uidNext: number },
  mb: PollMailbox,
  limits: IntakeLimits,
  counts: PollCounts,
  trust: TrustSettings,
): Promise<void> {
  const uidValidity = folder.uidValidity;
  const rescan = mb.uidValidity !== uidValidity;
  const found = await client.search(rescan ? rescanQuery(mb) : { kind: 'fromUid', uid: mb.lastUid + 1 });
  // `n:*` names the last message even when its UID is below n
  const uids = found.filter((u) => rescan || u > mb.lastUid).sort((a, b) => a - b);
  const own = new Set([addressOf(ctx.mailFrom), addressOf(mb.username)].filter((a): a is string => a !== null));
  const mailbox: IntakeMailbox = { id: mb.id, workspaceId: mb.workspaceId, own, trust };

  for (let i = 0; i < uids.length; i += META_CHUNK) {
    const metas: { uid: number; size: number; receivedAt: Date }[] = [];
    for await (const m of client.fetchMeta(uids.slice(i, i + META_CHUNK))) {
      metas.push({ uid: m.uid, size: m.size, receivedAt: m.internalDate ?? ctx.now() });
    }
    metas.sort((a, b) => a.uid - b.uid);
    for (const batch of batches(metas, limits)) {
      const messages = await fetchBatch(client, batch, uidValidity, limits);
      step(ctx, 'mail:fetched');
      for (let k = 0; k < messages.length; k++) {
        const msg = messages[k]!;
        const result = await forMessage(msg, () => intakeMessage(ctx, mailbox, msg, limits));
        counts[result.status]++;
        step(ctx, 'mail:imported');
        await forMessage(msg, async () => {
          if (mb.afterImport === 'move') await client.move(msg.uid, mb.moveTo!);
          else await client.markSeen(msg.uid);
        });
        step(ctx, 'mail:flagged');
        if (!rescan) await advance(ctx.sql, mb, uidValidity, msg.uid);
        // handled: let the source go before the next one is parsed
        messages[k] = { ...msg, source: null, headerBlock: null };
      }
    }
  }
  if (rescan) await advance(ctx.sql, mb, uidValidity, folder.uidNext - 1);
}

/**
 * What a scan without a usable position reads. The first poll of a mailbox (or of new settings):
 * its unseen messages, not years of read mail. After a UIDVALIDITY change: the unseen ones and
 * everything received since the day before the last poll, so a message a person read before it
 * was polled is not lost; the ones imported already are recognised by their dedupe keys.
 */
function rescanQuery(mb: PollMailbox): ImapQuery {
  if (mb.uidValidity === null || !mb.lastPollAt) return { kind: 'unseen' };
  return { kind: 'unseenOrSince', since: new Date(mb.lastPollAt.getTime() - 24 * 3600 * 1000) };
}

/** Consecutive messages whose sources together stay under BATCH_BYTES; a message over the size limit comes alone. */
function* batches<T extends { size: number }>(metas: T[], limits: IntakeLimits): Generator<T[]> {
  let batch: T[] = [];
  let bytes = 0;
  for (const m of metas) {
    const size = m.size > limits.maxMessageBytes ? 0 : m.size;
    if (batch.length > 0 && (bytes + size > BATCH_BYTES || batch.length >= BATCH_MESSAGES)) {
      yield batch;
      [batch, bytes] = [[], 0];
    }
    batch.push(m);
    bytes += size;
  }
  if (batch.length > 0) yield batch;
}

/** The sources of a batch, in UID order, fetched in one command; only the headers of a message over the size limit. */
async function fetchBatch(
  client: ImapSession,
  batch: { uid: number; size: number; receivedAt: Date }[],
  uidValidity: string,
  limits: IntakeLimits,
): Promise<FetchedMessage[]> {
  const byUid = new Map(batch.map((m) => [m.uid, m]));
  const small = batch.filter((m) => m.size <= limits.maxMessageBytes).map((m) => m.uid);
  const large = batch.filter((m) => m.size > limits.maxMessageBytes).map((m) => m.uid);
  const out: FetchedMessage[] = [];
  const collect = async (uids: number[], part: 'source' | 'headers') => {
    if (uids.length === 0) return;
    for await (const m of client.fetchBytes(uids, part)) {
      const meta = byUid.get(m.uid);
      if (!meta) continue;
      out.push({ ...meta, uidValidity, source: m.source, headerBlock: m.headers });
    }
  };
  await collect(small, 'source');
  await collect(large, 'headers');
  // a message whose source did not come (deleted meanwhile) is not handled: it is gone
  return out.filter((m) => m.source !== null || byUid.get(m.uid)!.size > limits.maxMessageBytes).sort((a, b) => a.uid - b.uid);
}

/** Records the position under the settings the poll started with: a change of settings meanwhile wins. */
async function advance(sql: Db, mb: PollMailbox, uidValidity: string, lastUid: number): Promise<void> {
  await sql`
    update mailboxes set uid_validity = ${uidValidity}::bigint, last_uid = ${Math.max(lastUid, 0)}
    where id = ${mb.id} and settings_version = ${mb.settingsVersion}`;
}
