/**
 * Calendar dates as `YYYY-MM-DD` strings. Time entries and periods are dated in local
 * calendar days, never instants, so arithmetic happens on UTC midnights where no DST exists.
 */

import { invalid } from '../errors.ts';
import { MAX_DATE, MIN_DATE } from '../input.ts';

const DAY_MS = 86_400_000;
const FIRST_DAY = Date.UTC(1900, 0, 1);
const LAST_DAY = Date.UTC(9999, 11, 31);

const toUtc = (date: string) => Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10)));

/**
 * Back to `YYYY-MM-DD`. Arithmetic that leaves the app's date range is a 400: past 9999
 * toISOString writes `+010000-…`, which is no date PostgreSQL (or a string comparison) reads.
 */
function fromUtc(ms: number): string {
  if (!(ms >= FIRST_DAY && ms <= LAST_DAY)) throw invalid('date_out_of_range', undefined, `Dates run from ${MIN_DATE} to ${MAX_DATE}.`);
  return new Date(ms).toISOString().slice(0, 10);
}

export function addDays(date: string, days: number): string {
  return fromUtc(toUtc(date) + days * DAY_MS);
}

/** Whole days from `from` to `to` (negative when `to` is earlier). */
export function daysBetween(from: string, to: string): number {
  return Math.round((toUtc(to) - toUtc(from)) / DAY_MS);
}

export function monthStart(date: string): string {
  return `${date.slice(0, 7)}-01`;
}

export function monthEnd(date: string): string {
  const y = Number(date.slice(0, 4));
  const m = Number(date.slice(5, 7));
  return fromUtc(Date.UTC(y, m, 0));
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The calendar date of an instant on the wall clock of an IANA timezone. */
export function localDate(at: Date, timeZone: string): string {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    formatters.set(timeZone, f);
  }
  const parts = Object.fromEntries(f.formatToParts(at).map((p) => [p.type, p.value]));
  return `${parts.year}-${parts.month}-${parts.day}`;
}

/**
 * The canonical name of an IANA timezone, or null when it is not one. Fixed offsets such
 * as `+01:00` are refused: they ignore daylight saving, which is what a timezone is for.
 */
export function canonicalTimezone(name: string): string | null {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name)) return null;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/** `HH:MM` or `HH:MM:SS` to `HH:MM:SS`. */
export function normaliseClock(value: string): string {
  return value.length === 5 ? `${value}:00` : value;
}
