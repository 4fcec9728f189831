import { createHash } from 'node:crypto';
import { storableText } from '../../input.ts';

/**
 * A message as it came off the server, read without a MIME parser: the header block (unfolded,
 * by lower-cased name) and the body bytes. The noise rules, the threading headers and the dedupe
 * key read this, so they work the same for a message no parser can make sense of.
 */
export interface RawMessage {
  headers: Map<string, string[]>;
  body: Buffer;
}

const CRLFCRLF = Buffer.from('\r\n\r\n');
const LFLF = Buffer.from('\n\n');

export function readRaw(source: Buffer): RawMessage {
  let end = source.indexOf(CRLFCRLF);
  let skip = 4;
  const lf = source.indexOf(LFLF);
  if (end < 0 || (lf >= 0 && lf < end)) [end, skip] = [lf, 2];
  const headerBytes = end < 0 ? source : source.subarray(0, end);
  return { headers: parseHeaderBlock(headerBytes.toString('latin1')), body: end < 0 ? Buffer.alloc(0) : source.subarray(end + skip) };
}

/**
 * Unfolds continuation lines; a line that is not `Name: value` is skipped. Values are storable
 * text (storableText): whatever reads a header (threading, the log, the noise rules) may write it.
 */
export function parseHeaderBlock(block: string): Map<string, string[]> {
  const headers = new Map<string, string[]>();
  const lines: string[] = [];
  for (const line of block.split(/\r?\n/)) {
    if (/^[ \t]/.test(line) && lines.length > 0) lines[lines.length - 1] += ` ${line.trim()}`;
    else lines.push(line);
  }
  for (const line of lines) {
    const m = /^([!-9;-~]+)[ \t]*:(.*)$/.exec(line);
    if (!m) continue;
    const name = m[1]!.toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), storableText(m[2]!.trim())]);
  }
  return headers;
}

/** The first value of a header, or null. */
export const header = (raw: RawMessage, name: string): string | null => raw.headers.get(name)?.[0] ?? null;

/** Message ids as written in Message-ID, In-Reply-To and References: the `<...>` tokens, brackets removed. */
export function messageIds(value: string | null): string[] {
  if (!value) return [];
  return [...value.matchAll(/<([^<>\s]{1,900})>/g)].map((m) => m[1]!);
}

/** The message's own id (without brackets), or null when it has none. */
export function ownMessageId(raw: RawMessage): string | null {
  const value = header(raw, 'message-id');
  if (!value) return null;
  return messageIds(value)[0] ?? (value.slice(0, 900) || null);
}

/** Headers that make a message what it is; trace headers (Received, Delivered-To, ...) are left out, since a second copy differs there. */
const IDENTIFYING = ['from', 'to', 'cc', 'subject', 'date'];

/**
 * The dedupe key: SHA-256 of the Message-ID and of a hash of the content (the identifying
 * headers and the body bytes). A second copy of the same message, re-delivered or found again
 * after a UIDVALIDITY change, has the same key; a different message reusing a Message-ID (or
 * having none) has another.
 */
export function dedupeKey(raw: RawMessage, messageId: string | null): string {
  const content = createHash('sha256');
  for (const name of IDENTIFYING) content.update(`${name}:${(raw.headers.get(name) ?? []).join('\n').replace(/\s+/g, ' ').trim()}\n`);
  content.update(raw.body);
  return createHash('sha256')
    .update(`${messageId ?? ''}\n${content.digest('hex')}`)
    .digest('hex');
}

/** The key of a message too large to read: its headers and its size stand for the content. */
export function oversizeKey(raw: RawMessage, messageId: string | null, size: number): string {
  return createHash('sha256')
    .update(`oversize\n${size}\n`)
    .update(dedupeKey({ headers: raw.headers, body: Buffer.alloc(0) }, messageId))
    .digest('hex');
}
