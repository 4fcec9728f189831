import { header, type RawMessage } from './raw.ts';

/**
 * Why a message is a loop or noise, as the intake log's `reason`; each has let a well-known
 * helpdesk loop with an auto-responder or import a list's traffic as tickets.
 */
export type NoiseReason =
  | 'auto_submitted'
  | 'precedence'
  | 'list_id'
  | 'autoreply_header'
  | 'auto_response_suppress'
  | 'exchange_rules_loop'
  | 'x_loop'
  | 'null_return_path'
  | 'delivery_report'
  | 'bounce'
  | 'own_address';

/** The addresses that are us: the sending address (MAIL_FROM) and the mailbox's own, lower-cased. */
export type OwnAddresses = ReadonlySet<string>;

const lower = (v: string | null) => (v ?? '').trim().toLowerCase();

/** A mail address inside a header value (`Name <a@b>` or a bare `a@b`), lower-cased. */
export function addressOf(value: string | null): string | null {
  if (!value) return null;
  const m = /<([^<>\s]+@[^<>\s]+)>/.exec(value) ?? /([^\s<>"',;:]+@[^\s<>"',;:]+)/.exec(value);
  return m ? m[1]!.toLowerCase() : null;
}

/**
 * The first noise rule a message meets, or null. Header values are read raw (not MIME-decoded):
 * every rule is about tokens and addresses, never about words in a language.
 */
export function noiseReason(raw: RawMessage, own: OwnAddresses, from: string | null): NoiseReason | null {
  const autoSubmitted = header(raw, 'auto-submitted');
  if (autoSubmitted !== null && lower(autoSubmitted.split(';')[0]!) !== 'no') return 'auto_submitted';
  if (['bulk', 'junk', 'list'].includes(lower(header(raw, 'precedence')))) return 'precedence';
  if (raw.headers.has('list-id')) return 'list_id';
  if (['x-autoreply', 'x-autorespond', 'x-autoresponder'].some((h) => raw.headers.has(h))) return 'autoreply_header';
  if (
    lower(header(raw, 'x-auto-response-suppress'))
      .split(/[\s,]+/)
      .includes('all')
  )
    return 'auto_response_suppress';
  if (raw.headers.has('x-ms-exchange-inbox-rules-loop')) return 'exchange_rules_loop';
  if ((raw.headers.get('x-loop') ?? []).some((v) => own.has(addressOf(v) ?? lower(v)))) return 'x_loop';
  if ((raw.headers.get('return-path') ?? []).some((v) => /^<\s*>$/.test(v.trim()))) return 'null_return_path';
  if (/^multipart\/report\b/.test(lower(header(raw, 'content-type')))) return 'delivery_report';
  if (raw.headers.has('x-failed-recipients') || /^(mailer-daemon|postmaster)@/.test(from ?? '')) return 'bounce';
  if (from && own.has(from)) return 'own_address';
  return null;
}
