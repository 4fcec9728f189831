/**
 * Locale formatting for the documents: dates and hours in the client's locale (Intl), with a
 * fixed UTC zone so a document never depends on the machine that rendered it. The csv has its
 * own plain, never-localised numbers (`plainHours`).
 */

import { minorToDecimal } from '../../rates/money.ts';

/** The locale used when a client's locale is not a tag this runtime knows (the clients table's default). */
export const FALLBACK_LOCALE = 'en-GB';

export interface Formatter {
  /** The locale actually used (the client's, or the fallback). */
  locale: string;
  /** `YYYY-MM-DD` in the locale's short numeric form (de-DE `31.10.2026`). */
  date(isoDate: string): string;
  /** Two dates as a range; one date when both are the same day. */
  dateRange(first: string, last: string): string;
  /** Minutes as decimal hours with two fraction digits (de-DE `1,50`). */
  hours(minutes: number): string;
  /** An amount in minor units of `currency`, in the locale's currency format (de-DE `1.234,50 €`), exact: Intl reads the decimal string. */
  money(minor: number, currency: string): string;
}

/**
 * The client's locale if this runtime supports it, else the fallback: an unknown tag would make
 * Intl silently pick the process's default locale, and a malformed one throws.
 */
export function resolveLocale(locale: string): string {
  try {
    return Intl.DateTimeFormat.supportedLocalesOf([locale])[0] ?? FALLBACK_LOCALE;
  } catch {
    return FALLBACK_LOCALE;
  }
}

export function formatterFor(clientLocale: string): Formatter {
  const locale = resolveLocale(clientLocale);
  const dates = new Intl.DateTimeFormat(locale, { timeZone: 'UTC', year: 'numeric', month: '2-digit', day: '2-digit' });
  const numbers = new Intl.NumberFormat(locale, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  const date = (isoDate: string) => dates.format(utcDate(isoDate));
  return {
    locale,
    date,
    dateRange: (first, last) => (first === last ? date(first) : `${date(first)} – ${date(last)}`),
    // `+ 0` turns -0 into 0, so an empty sum never prints as "-0.00".
    hours: (minutes) => numbers.format(minutes / 60 + 0),
    money: (minor, currency) => moneyFormat(locale, currency).format(minorToDecimal(minor, currency) as unknown as number),
  };
}

const moneyFormats = new Map<string, Intl.NumberFormat>();
function moneyFormat(locale: string, currency: string): Intl.NumberFormat {
  const key = `${locale}|${currency}`;
  let f = moneyFormats.get(key);
  if (!f) moneyFormats.set(key, (f = new Intl.NumberFormat(locale, { style: 'currency', currency })));
  return f;
}

/**
 * Minutes as hours, a plain decimal with a dot and two fraction digits (`90` → `1.50`, `-20` →
 * `-0.33`), computed in integers: minutes × 5 / 3 hundredths never falls on a half, so rounding
 * is exact and the same as Intl's.
 */
export function plainHours(minutes: number): string {
  const hundredths = Math.round((Math.abs(minutes) * 5) / 3);
  const sign = minutes < 0 ? '-' : '';
  return `${sign}${Math.floor(hundredths / 100)}.${String(hundredths % 100).padStart(2, '0')}`;
}

/** A `YYYY-MM-DD` date at midnight UTC; rejects anything else, so a bad date never prints as "Invalid Date". */
function utcDate(isoDate: string): Date {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(isoDate);
  if (!match) throw new Error(`Not a YYYY-MM-DD date: ${isoDate}`);
  return new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
}
