import { createRequire } from 'node:module';
import EmailReplyParser from 'email-reply-parser';
import sanitizeHtml from 'sanitize-html';
import TurndownService from 'turndown';
import { MAX_COMMENT_LENGTH } from '../../comments/create.ts';

/** The contract's limits on what the intake writes (tickets.title, tickets.description, comments.body). */
export const MAX_TITLE = 200;
export const MAX_DESCRIPTION = 50_000;
export const MAX_COMMENT = MAX_COMMENT_LENGTH;

/**
 * email-reply-parser runs its patterns with RE2 (linear time) when the optional `re2` package is
 * installed, else with JavaScript regexes, some of which take cubic time on crafted text (10 KB
 * took 0.8 s, 40 KB about a minute). It reads at most this much of a message either way.
 */
const REPLY_SCAN_CHARS = 20_000;
/** HTML beyond this is not converted (DOM parsing is the cost): its text is taken instead. */
const MAX_HTML_TO_CONVERT = 2 * 1024 * 1024;

/** Whether quoted-reply trimming is guarded against ReDoS (RE2 loaded); the poll warns when not. */
export const replyParserGuarded = (() => {
  try {
    createRequire(import.meta.url)('re2');
    return true;
  } catch {
    return false;
  }
})();

/** Code points, as PostgreSQL's length() counts them. */
const chars = (s: string) => Array.from(s);

/** `s` cut to `max` characters, ending with `note` when it was cut. */
export function fit(s: string, max: number, note = '\n\n_[The rest of the message was cut: it was too long.]_'): string {
  const all = chars(s);
  if (all.length <= max) return s;
  return all.slice(0, max - chars(note).length).join('') + note;
}

/** Reply and forward prefixes in the languages of the reply-parser corpus: Re, Fwd, Fw, AW, WG, TR, RE, SV, VS, Antw, Doorst, RV, Enc, RIF, Odp, PD. */
const PREFIX = /^\s*(?:(?:re|fwd?|aw|wg|tr|sv|vs|antw|doorst|rv|enc|rif|odp|pd)(?:\s*\[\d+\])?\s*[:：]\s*)+/i;

/** A ticket title from a subject: prefixes removed, whitespace collapsed, at most 200 characters. */
export function ticketTitle(subject: string): string {
  const title = subject.replace(PREFIX, '').replace(/\s+/g, ' ').trim();
  return chars(title).slice(0, MAX_TITLE).join('').trim() || '(no subject)';
}

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });

/**
 * HTML mail to Markdown. The HTML is first cut down to structure and links: scripts, styles and
 * images go (a remote image is a tracking pixel on every view of the ticket; embedded `cid:`
 * images arrive as attachments). Turndown then writes Markdown, which is stored and rendered
 * like every description (markdown-it without raw HTML, then sanitize-html).
 */
export function htmlToMarkdown(html: string): string {
  const clean = sanitizeHtml(html, {
    allowedTags: [
      'h1',
      'h2',
      'h3',
      'h4',
      'h5',
      'h6',
      'p',
      'br',
      'div',
      'span',
      'a',
      'b',
      'strong',
      'i',
      'em',
      'u',
      's',
      'del',
      'ul',
      'ol',
      'li',
      'blockquote',
      'pre',
      'code',
      'table',
      'thead',
      'tbody',
      'tr',
      'th',
      'td',
      'hr',
    ],
    allowedAttributes: { a: ['href'] },
    allowedSchemes: ['http', 'https', 'mailto'],
    nonTextTags: ['script', 'style', 'textarea', 'option', 'noscript', 'title', 'head'],
  });
  if (clean.length > MAX_HTML_TO_CONVERT) return sanitizeHtml(clean, { allowedTags: [], allowedAttributes: {} }).trim();
  return turndown.turndown(clean).trim();
}

/** The message's text as Markdown: the text part, else its HTML converted. */
export function messageText(m: { text: string | null; html: string | null }): string {
  if (m.text && m.text.trim()) return m.text.replace(/\r\n/g, '\n').trim();
  return m.html ? htmlToMarkdown(m.html) : '';
}

/**
 * The new part of a reply: quoted history and signatures trimmed by email-reply-parser. Only the
 * first REPLY_SCAN_CHARS are read; when no quote or signature starts within them the whole text
 * is kept, so nothing the sender wrote is lost to the bound. An empty result keeps the whole text.
 */
export function visibleReply(text: string): string {
  const head = text.slice(0, REPLY_SCAN_CHARS);
  const visible = new EmailReplyParser().read(head).getVisibleText().trim();
  if (!visible) return text.trim();
  if (text.length > head.length && visible.length >= head.trim().length) return text.trim();
  return visible;
}

const humanSize = (n: number) => (n >= 1024 * 1024 ? `${(n / (1024 * 1024)).toFixed(1)} MB` : n >= 1024 ? `${Math.round(n / 1024)} KB` : `${n} bytes`);

/** A line per attachment left out, for the ticket or comment it belonged to. */
export function droppedNote(dropped: { filename: string; size: number; why: 'too_large' | 'too_many' }[], maxBytes: number, maxCount: number): string {
  if (dropped.length === 0) return '';
  const lines = dropped.map((d) =>
    d.why === 'too_large'
      ? `- “${d.filename}” (${humanSize(d.size)}): over the attachment limit of ${humanSize(maxBytes)}`
      : `- “${d.filename}”: past the ${maxCount} attachments kept per message`,
  );
  return `\n\n_Attachments not imported:_\n${lines.join('\n')}`;
}
