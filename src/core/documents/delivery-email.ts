import type { OutgoingMail } from '../mail/mailer.ts';
import type { DocumentFormat } from './timesheet-model.ts';

/** One timesheet as its email shows it: the renderings to attach and what the text names. */
export interface DeliverySheet {
  number: string;
  clientName: string;
  /** The client's locale (`de-DE`): the language of the text and the format of the period. */
  locale: string;
  /** The agency (the workspace), who signs the text. */
  agency: string;
  periodStart: string;
  periodEnd: string;
  /** The voided number of the same client and period this timesheet replaces (issue 23), if any. */
  replacesNumber?: string | null;
  files: { format: DocumentFormat; content: Uint8Array }[];
}

interface Wording {
  subject: (number: string, client: string) => string;
  body: (number: string, client: string, period: string, agency: string) => string;
  /** The line a replacement adds after the greeting's paragraph. */
  replaces: (voided: string) => string;
  noticeSubject: (number: string, client: string) => string;
  noticeBody: (number: string, client: string, period: string, agency: string) => string;
}

/** The email's words by language; a language not listed gets English. */
const WORDING: Record<string, Wording> = {
  en: {
    subject: (n, c) => `Timesheet ${n} — ${c}`,
    body: (n, c, p, a) => `Hello,\n\nplease find attached timesheet ${n} for ${c}, covering ${p}.\n\nKind regards,\n${a}\n`,
    replaces: (v) => `It replaces timesheet ${v}, which was voided.`,
    noticeSubject: (n, c) => `Timesheet ${n} voided — ${c}`,
    noticeBody: (n, c, p, a) =>
      `Hello,\n\ntimesheet ${n} for ${c}, covering ${p}, has been voided. Please disregard it; a replacement will follow if one is due.\n\nKind regards,\n${a}\n`,
  },
  de: {
    subject: (n, c) => `Stundennachweis ${n} — ${c}`,
    body: (n, c, p, a) => `Guten Tag,\n\nanbei erhalten Sie den Stundennachweis ${n} für ${c} über den Zeitraum ${p}.\n\nMit freundlichen Grüßen\n${a}\n`,
    replaces: (v) => `Er ersetzt den stornierten Stundennachweis ${v}.`,
    noticeSubject: (n, c) => `Stundennachweis ${n} storniert — ${c}`,
    noticeBody: (n, c, p, a) =>
      `Guten Tag,\n\nder Stundennachweis ${n} für ${c} über den Zeitraum ${p} wurde storniert. Bitte betrachten Sie ihn als gegenstandslos; ein Ersatz folgt, falls einer fällig ist.\n\nMit freundlichen Grüßen\n${a}\n`,
  },
  fr: {
    subject: (n, c) => `Relevé d'heures ${n} — ${c}`,
    body: (n, c, p, a) => `Bonjour,\n\nveuillez trouver ci-joint le relevé d'heures ${n} de ${c} pour la période ${p}.\n\nCordialement,\n${a}\n`,
    replaces: (v) => `Il remplace le relevé d'heures ${v}, annulé.`,
    noticeSubject: (n, c) => `Relevé d'heures ${n} annulé — ${c}`,
    noticeBody: (n, c, p, a) =>
      `Bonjour,\n\nle relevé d'heures ${n} de ${c} pour la période ${p} a été annulé. Merci de ne pas en tenir compte ; un relevé de remplacement suivra le cas échéant.\n\nCordialement,\n${a}\n`,
  },
};

const CONTENT_TYPES: Record<DocumentFormat, string> = {
  pdf: 'application/pdf',
  html: 'text/html; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
};

type Envelope = { from: string; to: string; messageId: string; replyTo?: string | null };

/**
 * The email of one delivery: the pdf (or, without one, the html) and the csv attached, a short
 * text in the client's language (naming the voided number it replaces, if any), and
 * `Auto-Submitted: auto-generated` (RFC 3834) so that auto-responders stay silent and our own
 * mail intake never answers or files it. `replyTo` is one or more addresses: the workspace's
 * reply-to and the recipient's own reply address (mail/intake/reply-token.ts).
 */
export function deliveryEmail(sheet: DeliverySheet, envelope: Envelope): OutgoingMail {
  const { locale, words } = wordingFor(sheet.locale);
  const main = sheet.files.find((f) => f.format === 'pdf') ?? sheet.files.find((f) => f.format === 'html');
  const csv = sheet.files.find((f) => f.format === 'csv');
  let text = words.body(sheet.number, sheet.clientName, period(locale, sheet.periodStart, sheet.periodEnd), sheet.agency);
  // after the first paragraph (the greeting's), before the signature
  if (sheet.replacesNumber) text = text.replace(/\.\n\n/, `.\n${words.replaces(sheet.replacesNumber)}\n\n`);
  return {
    ...headersOf(envelope),
    subject: words.subject(sheet.number, sheet.clientName),
    text,
    attachments: [main, csv]
      .filter((f) => f !== undefined)
      .map((f) => ({ filename: `${sheet.number}.${f.format}`, contentType: CONTENT_TYPES[f.format], content: f.content })),
  };
}

/** The notice that a timesheet the recipient received was voided (no attachment): its number, client and period. */
export function voidNoticeEmail(sheet: Omit<DeliverySheet, 'files' | 'replacesNumber'>, envelope: Envelope): OutgoingMail {
  const { locale, words } = wordingFor(sheet.locale);
  return {
    ...headersOf(envelope),
    subject: words.noticeSubject(sheet.number, sheet.clientName),
    text: words.noticeBody(sheet.number, sheet.clientName, period(locale, sheet.periodStart, sheet.periodEnd), sheet.agency),
    attachments: [],
  };
}

function headersOf({ replyTo, ...addresses }: Envelope) {
  return { ...addresses, headers: { 'Auto-Submitted': 'auto-generated', ...(replyTo ? { 'Reply-To': replyTo } : {}) } };
}

function wordingFor(clientLocale: string): { locale: string; words: Wording } {
  const locale = supported(clientLocale);
  return { locale, words: WORDING[new Intl.Locale(locale).language] ?? WORDING.en! };
}

/** The locale if Intl knows it, else English (a client's locale is free text). */
function supported(locale: string): string {
  try {
    return Intl.DateTimeFormat.supportedLocalesOf([locale])[0] ?? 'en';
  } catch {
    return 'en';
  }
}

/** The period as the client writes a date range (`Oct 1 – 31, 2026`, `01.–31.10.2026`). */
function period(locale: string, start: string, end: string): string {
  const f = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeZone: 'UTC' });
  return f.formatRange(new Date(`${start}T00:00:00Z`), new Date(`${end}T00:00:00Z`));
}
