import { MailParser, type AttachmentStream, type MessageText } from 'mailparser';
import { MAX_ATTACHMENT_BYTES } from '../../attachments/upload.ts';
import { storableText } from '../../input.ts';

/** What the intake keeps of a message; bounded by IntakeLimits. */
export interface IntakeLimits {
  /** A larger message is not downloaded: quarantined `too_large`. */
  maxMessageBytes: number;
  /** A larger attachment is dropped, with a note on the ticket or comment. */
  maxAttachmentBytes: number;
  /** Attachments kept per message; the rest are dropped with a note. */
  maxAttachments: number;
}

export const DEFAULT_LIMITS: IntakeLimits = {
  maxMessageBytes: 25 * 1024 * 1024,
  maxAttachmentBytes: MAX_ATTACHMENT_BYTES,
  maxAttachments: 50,
};

export interface ParsedAttachment {
  filename: string | undefined;
  contentType: string;
  data: Buffer;
  /** An image embedded in the HTML (`cid:`), shown inline. */
  inline: boolean;
}

export interface ParsedMessage {
  from: { address: string; name: string } | null;
  subject: string;
  /** The text/plain content; null when the message has none (HTML-only). */
  text: string | null;
  html: string | null;
  attachments: ParsedAttachment[];
  /** Attachments left out: over the size limit, or past the count limit. */
  dropped: { filename: string; size: number; why: 'too_large' | 'too_many' }[];
}

/**
 * Parses a message with mailparser's streaming parser: attachments are read from their streams
 * one at a time and one over the limit is counted, not kept. HTML is not converted to text here
 * (the intake converts HTML-only mail to Markdown itself).
 */
export function parseMessage(source: Buffer, limits: IntakeLimits): Promise<ParsedMessage> {
  return new Promise((resolve, reject) => {
    const parser = new MailParser({ skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
    const out: ParsedMessage = { from: null, subject: '', text: null, html: null, attachments: [], dropped: [] };
    let pending = 0;
    let ended = false;
    const finish = () => {
      if (ended && pending === 0) {
        const first = parser.from?.value.find((a) => a.address);
        out.from = first?.address ? { address: first.address, name: first.name } : null;
        out.subject = parser.subject ?? '';
        resolve(storable(out));
      }
    };
    parser.on('data', (data: AttachmentStream | MessageText) => {
      if (data.type === 'text') {
        out.text = data.text ?? null;
        out.html = data.html ?? null;
        return;
      }
      pending++;
      readAttachment(data, limits, out).then(() => {
        data.release?.();
        pending--;
        finish();
      }, reject);
    });
    parser.on('end', () => {
      ended = true;
      finish();
    });
    parser.on('error', reject);
    parser.end(source);
  });
}

/** The longest address there is (RFC 3696: 64 + 1 + 255); a longer From names no sender. */
const MAX_ADDRESS = 320;
/** Longer display names say nothing more (identities keep 200). */
const MAX_NAME = 200;
/** Longer attachment names say nothing more (the stored name keeps 255: cleanFilename). */
const MAX_FILENAME = 255;

/**
 * The message as PostgreSQL can store it: every text the sender wrote passes storableText here,
 * so no NUL or lone surrogate (a `=?UTF-8?Q?nul=00byte?=` subject, a UTF-16 part or file name)
 * reaches a ticket, a comment, an event's jsonb or the log. The header block is read the same way
 * (raw.ts); the rest of the intake may take both as they are.
 */
function storable(m: ParsedMessage): ParsedMessage {
  const text = (s: string | null) => (s === null ? null : storableText(s));
  return {
    from: m.from && m.from.address.length <= MAX_ADDRESS ? { address: storableText(m.from.address), name: storableText(m.from.name, MAX_NAME) } : null,
    subject: storableText(m.subject),
    text: text(m.text),
    html: text(m.html),
    attachments: m.attachments.map((a) => ({
      ...a,
      filename: a.filename === undefined ? undefined : storableText(a.filename, MAX_FILENAME),
      contentType: storableText(a.contentType, MAX_FILENAME),
    })),
    dropped: m.dropped.map((d) => ({ ...d, filename: storableText(d.filename, MAX_FILENAME) })),
  };
}

async function readAttachment(data: AttachmentStream, limits: IntakeLimits, out: ParsedMessage): Promise<void> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of data.content as AsyncIterable<Buffer>) {
    size += chunk.length;
    // keep counting (the parser needs the stream read), but hold nothing once over the limit
    if (size <= limits.maxAttachmentBytes) chunks.push(chunk);
    else chunks.length = 0;
  }
  const filename = data.filename ?? 'attachment';
  if (size > limits.maxAttachmentBytes) out.dropped.push({ filename, size, why: 'too_large' });
  else if (out.attachments.length >= limits.maxAttachments) out.dropped.push({ filename, size, why: 'too_many' });
  else
    out.attachments.push({
      filename: data.filename,
      contentType: data.contentType,
      data: Buffer.concat(chunks),
      inline: Boolean(data.related && data.cid && /^image\//i.test(data.contentType)),
    });
}
