import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../../../db/connect.ts';
import { firstAddress } from '../address.ts';
import { addressOf } from './noise.ts';
import type { RawMessage } from './raw.ts';

/**
 * Reply addresses: every message we send that invites a reply carries `Reply-To:
 * <local>+<token>@<domain>`, the token 160 random bits in lower-case base32 (32 characters:
 * mail servers may lower-case a local part). Only its SHA-256 is stored, with the recipient and
 * what the message was about. A reply reaching that address comes from someone who read our
 * message to that recipient: the proof a From header cannot give (Zammad, FreeScout and GitHub do
 * the same).
 */

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const TOKEN = /\+([a-z2-7]{32})@/gi;

/** 20 random bytes as 32 base32 characters. */
export function newReplyToken(): string {
  const bytes = randomBytes(20);
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

export const hashReplyToken = (token: string) => createHash('sha256').update(token.toLowerCase()).digest('hex');

/**
 * The address replies should reach: the workspace mailbox's own address when its login is one
 * (that is where the intake reads), else MAIL_FROM's; a `+token` subaddress of it, which mail
 * servers deliver to the same mailbox.
 */
async function replyBase(sql: Db, workspaceId: string, mailFrom: string): Promise<{ local: string; domain: string } | null> {
  const [box] = await sql<{ username: string }[]>`select username from mailboxes where workspace_id = ${workspaceId}`;
  const candidates = [box?.username ?? null, firstAddress(mailFrom)];
  for (const c of candidates) {
    const m = /^([^@\s+]+)(?:\+[^@\s]*)?@([^@\s]+)$/.exec(c?.trim() ?? '');
    if (m) return { local: m[1]!, domain: m[2]!.toLowerCase() };
  }
  return null;
}

export interface ReplyTokenFor {
  workspaceId: string;
  /** The recipient, as the message is addressed. */
  email: string;
  ticketId?: string | null;
  timesheetId?: string | null;
  deliveryId?: string | null;
}

/**
 * Issues a reply token for one recipient of one message and answers its reply address, or null
 * when neither the mailbox nor MAIL_FROM is an address (nowhere a reply could come back to).
 */
export async function issueReplyAddress(sql: Db, mailFrom: string, t: ReplyTokenFor): Promise<string | null> {
  const base = await replyBase(sql, t.workspaceId, mailFrom);
  if (!base) return null;
  const token = newReplyToken();
  await sql`
    insert into reply_tokens (token_hash, workspace_id, email, ticket_id, timesheet_id, delivery_id)
    values (${hashReplyToken(token)}, ${t.workspaceId}, ${t.email.toLowerCase()}, ${t.ticketId ?? null}, ${t.timesheetId ?? null}, ${t.deliveryId ?? null})`;
  return `${base.local}+${token}@${base.domain}`;
}

/** The headers a reply address can be found in: where the message was addressed, and where the server says it delivered it. */
const ADDRESSED = ['to', 'cc', 'delivered-to', 'x-original-to'];

/** Tokens of `+token@` addresses a message was sent to, lower-cased, without repeats. */
export function replyTokensOf(raw: RawMessage): string[] {
  const found = new Set<string>();
  for (const name of ADDRESSED) {
    for (const value of raw.headers.get(name) ?? []) for (const m of value.matchAll(TOKEN)) found.add(m[1]!.toLowerCase());
  }
  return [...found].slice(0, 10);
}

/** A valid reply token of the workspace and what it was issued for. */
export interface ReplyToken {
  email: string;
  ticketId: string | null;
  timesheetNumber: string | null;
}

/**
 * What the message's reply address says: `none` (it was sent to none), `unknown` (a token we never
 * issued in this workspace: guessed, mistyped, or another workspace's), or the token.
 */
export async function findReplyToken(
  sql: Db,
  workspaceId: string,
  raw: RawMessage,
): Promise<{ kind: 'none' | 'unknown' } | { kind: 'valid'; token: ReplyToken }> {
  const tokens = replyTokensOf(raw);
  if (tokens.length === 0) return { kind: 'none' };
  const [row] = await sql<ReplyToken[]>`
    select r.email, r.ticket_id as "ticketId", s.number as "timesheetNumber"
    from reply_tokens r left join timesheets s on s.id = r.timesheet_id
    where r.workspace_id = ${workspaceId} and r.token_hash = any(${tokens.map(hashReplyToken)}::text[])
    order by r.created_at desc limit 1`;
  return row ? { kind: 'valid', token: row } : { kind: 'unknown' };
}

/** Whether the From address is the one the token was sent to: a forwarded message's sender is not its recipient. */
export const tokenMatches = (token: ReplyToken, from: string) => addressOf(from) === token.email.toLowerCase();

/** The reply address of one timesheet email to one recipient (the workspace is the timesheet's). */
export async function timesheetReplyAddress(sql: Db, mailFrom: string, d: { timesheetId: string; deliveryId: string; email: string }): Promise<string | null> {
  const [sheet] = await sql<{ workspaceId: string }[]>`select workspace_id as "workspaceId" from timesheets where id = ${d.timesheetId}`;
  return sheet
    ? issueReplyAddress(sql, mailFrom, { workspaceId: sheet.workspaceId, email: d.email, timesheetId: d.timesheetId, deliveryId: d.deliveryId })
    : null;
}
