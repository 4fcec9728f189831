import type { Db } from '../../../db/connect.ts';
import type { RawMessage } from './raw.ts';
import { findReplyToken, tokenMatches, type ReplyToken } from './reply-token.ts';
import { storableText } from '../../input.ts';
import { trustedAuthResults, type DnsResolver, type Verification } from './verify.ts';

/** What the intake may believe about who sent a message, and why (the intake log's `verdict`). */
export interface SenderTrust {
  /** How the From address was proven; null: it was not, the From header is only a claim. */
  proof: 'reply_token' | 'dkim' | 'auth_results' | null;
  verdict: string;
  /** The reply token the sender's message came back with, when it was theirs. */
  token: ReplyToken | null;
}

/** A mailbox's trust settings, and the DNS the DKIM check asks (given by the caller at the edge). */
export interface TrustSettings {
  resolver: DnsResolver;
  /** The authserv-id of a receiving server whose Authentication-Results header is believed; null: none is. */
  trustedAuthservId: string | null;
}

/**
 * Judges the sender: a reply address's token sent to this very From address proves them; else a
 * trusted receiving server's Authentication-Results, else our own DKIM check (`dkim`, made before
 * the transaction: verify.ts), may prove the From domain. A token sent to someone else (a
 * forwarded message) proves nothing about this sender.
 */
export async function judgeSender(
  sql: Db,
  workspaceId: string,
  message: { source: Buffer; raw: RawMessage; from: string },
  s: TrustSettings,
  dkim: Verification,
): Promise<SenderTrust> {
  const { source, raw, from } = message;
  const verdict: string[] = [];
  const found = await findReplyToken(sql, workspaceId, raw);
  if (found.kind === 'valid' && tokenMatches(found.token, from)) return { proof: 'reply_token', verdict: 'reply-token=valid', token: found.token };
  if (found.kind === 'valid') verdict.push('reply-token=other-recipient');
  if (found.kind === 'unknown') verdict.push('reply-token=unknown');
  if (s.trustedAuthservId) {
    const ar = trustedAuthResults(source, raw, from, s.trustedAuthservId);
    if (ar.proven) return { proof: 'auth_results', verdict: [...verdict, ar.verdict].join(' '), token: null };
    verdict.push(ar.verdict);
  }
  verdict.push(dkim.verdict);
  return { proof: dkim.proven ? 'dkim' : null, verdict: verdict.join(' ').slice(0, 500), token: null };
}

/** Records the verdict on the message's intake log row (claimed by its dedupe key in this transaction). */
export async function noteVerdict(sql: Db, workspaceId: string, key: string, verdict: string): Promise<void> {
  await sql`update intake_messages set verdict = ${storableText(verdict, 500)} where workspace_id = ${workspaceId} and dedupe_key = ${key}`;
}
