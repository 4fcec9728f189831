import { invalid } from '../errors.ts';
import { UUID_PATTERN } from '../validation.ts';

/**
 * Opaque keyset cursors: base64url of a JSON array `[kind, ...sortKey]`. `kind` names the
 * ordering a cursor belongs to, so a cursor from another list (say, a board column) is refused
 * as `bad_cursor` instead of silently paging the wrong order.
 */
/** 400 `bad_cursor`, for every list's cursor. */
export const badCursor = () => invalid('bad_cursor', { field: 'cursor' }, 'The cursor is malformed or belongs to another list.');

export function encodeCursor(kind: string, parts: string[]): string {
  return Buffer.from(JSON.stringify([kind, ...parts]), 'utf8').toString('base64url');
}

/** The sort-key parts of a cursor of `kind` with `n` parts; anything else is 400 `bad_cursor`. */
export function decodeCursor(raw: string, kind: string, n: number): string[] {
  if (raw.length === 0 || raw.length > 200 || !/^[A-Za-z0-9_-]+$/.test(raw)) throw badCursor();
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw badCursor();
  }
  if (!Array.isArray(value) || value.length !== n + 1 || value[0] !== kind || !value.every((v) => typeof v === 'string')) throw badCursor();
  return value.slice(1) as string[];
}

const MICROS = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3})\d{3}$/;

/** A UTC timestamp with microseconds (`YYYY-MM-DDTHH:MI:SS.ffffff`) that names a real instant. */
export function isMicrosTimestamp(s: string): boolean {
  const m = MICROS.exec(s);
  if (!m) return false;
  const d = new Date(`${m[1]}Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString() === `${m[1]}Z`;
}

export interface UpdatedKey {
  /** updated_at in UTC with microseconds, as PostgreSQL printed it. */
  at: string;
  id: string;
}

/** The GET /tickets cursor: (updatedAt with microseconds, id) of the last row of a page. */
export function encodeUpdatedCursor(key: UpdatedKey): string {
  return encodeCursor('updated', [key.at, key.id]);
}

export function decodeUpdatedCursor(raw: string): UpdatedKey {
  const [at, id] = decodeCursor(raw, 'updated', 2) as [string, string];
  if (!isMicrosTimestamp(at) || !UUID_PATTERN.test(id)) throw badCursor();
  return { at, id };
}
