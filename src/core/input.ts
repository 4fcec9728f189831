import { z } from 'zod';
import { invalid } from './errors.ts';

/**
 * Rules every input of every adapter passes before a schema sees it: strings PostgreSQL can store
 * (no NUL, no lone UTF-16 surrogate: text and jsonb refuse both) and JSON of sane depth. One rule
 * for the whole app, applied to request bodies and query strings (HTTP) and tool arguments (MCP),
 * so a hostile string is a 400 `invalid_characters` and never reaches SQL.
 */

/** Deeper JSON than any input of the service needs; refusing it keeps every walker cheap. */
export const MAX_INPUT_DEPTH = 32;

const NUL = /\u0000/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether PostgreSQL can store the string as text and inside jsonb. */
export function isStorableString(s: string): boolean {
  return !NUL.test(s) && !LONE_SURROGATE.test(s);
}

const UNSTORABLE = new RegExp(`${NUL.source}|${LONE_SURROGATE.source}`, 'g');

/**
 * The same rule for text that must be kept rather than refused (what a mail message says): each
 * NUL and lone surrogate becomes U+FFFD, as a decoder writes for bytes it cannot read, and at most
 * `max` code points are kept (PostgreSQL's length()), never half a surrogate pair.
 */
export function storableText(s: string, max = Infinity): string {
  const clean = s.replace(UNSTORABLE, '\uFFFD');
  if (clean.length <= max) return clean;
  // a code point is at most two code units: no need to split the whole of a long text
  return Array.from(clean.slice(0, 2 * max))
    .slice(0, max)
    .join('');
}

/** The path (`a.b.0`) of the first unstorable string or key in `value`, or null. Iterative: deep input cannot overflow the stack. */
export function findBadInput(value: unknown): { path: string; problem: 'invalid_characters' | 'too_deep' } | null {
  const stack: { v: unknown; path: string[] }[] = [{ v: value, path: [] }];
  while (stack.length > 0) {
    const { v, path } = stack.pop()!;
    if (typeof v === 'string') {
      if (!isStorableString(v)) return { path: path.join('.'), problem: 'invalid_characters' };
    } else if (v !== null && typeof v === 'object') {
      if (path.length >= MAX_INPUT_DEPTH) return { path: path.join('.'), problem: 'too_deep' };
      for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
        if (!isStorableString(k)) return { path: [...path, k.replace(/[^\x20-\x7e]/g, '?')].join('.'), problem: 'invalid_characters' };
        stack.push({ v: child, path: [...path, k] });
      }
    }
  }
  return null;
}

/** Throws 400 `invalid` (`invalid_characters` or `too_deep`, with `field`) for input no operation may receive. */
export function assertCleanInput(value: unknown, prefix?: string): void {
  const bad = findBadInput(value);
  if (!bad) return;
  const field = [prefix, bad.path].filter(Boolean).join('.') || undefined;
  if (bad.problem === 'too_deep') throw invalid('too_deep', { field }, `Input is nested deeper than ${MAX_INPUT_DEPTH} levels.`);
  throw invalid('invalid_characters', { field }, `${field ?? 'Input'} contains a NUL character or a lone UTF-16 surrogate.`);
}

/** The range of calendar dates the service accepts anywhere: PostgreSQL stores them, and they are plausible work dates. */
export const MIN_DATE = '1900-01-01';
export const MAX_DATE = '9999-12-31';
const MIN_INSTANT = Date.UTC(1900, 0, 1);
const MAX_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** The one date schema of the app: `YYYY-MM-DD`, a real calendar date, 1900-01-01 to 9999-12-31. */
export const dateSchema = z.iso
  .date()
  .refine((d) => d >= MIN_DATE && d <= MAX_DATE, { message: `Use a date from ${MIN_DATE} to ${MAX_DATE}.` })
  .describe('A calendar date, YYYY-MM-DD');

/**
 * The one datetime schema: ISO 8601 with an offset, an instant inside the same range in UTC (an
 * offset can carry `9999-12-31T23:00-05:00` into year 10000, which PostgreSQL cannot store).
 */
export const datetimeSchema = z.iso
  .datetime({ offset: true })
  .refine(
    (s) => {
      const t = Date.parse(s);
      return t >= MIN_INSTANT && t <= MAX_INSTANT;
    },
    { message: `Use an instant from ${MIN_DATE} to ${MAX_DATE} (UTC).` },
  )
  .describe('An ISO 8601 datetime with an offset (Z or +HH:MM)');
