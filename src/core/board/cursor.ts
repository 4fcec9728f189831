import { badCursor, decodeCursor, encodeCursor, isMicrosTimestamp } from '../tickets/cursor.ts';
import { UUID_PATTERN } from '../validation.ts';

/**
 * The cursor of one board column: the column's state, the change-feed mark of the walk's first
 * page, and the board-order key (priority position, updatedAt with microseconds, id) of the last
 * ticket returned. The state is part of it so another column's cursor is refused, and the kind
 * (`board`) so a GET /tickets cursor is refused too.
 */
export interface BoardCursor {
  stateId: string;
  /** Highest change number the walk's first page could see; tickets changed after it are left out of later pages. */
  mark: string;
  priority: number;
  /** updated_at in UTC with microseconds, as PostgreSQL printed it. */
  at: string;
  id: string;
}

const KIND = 'board';
const INT32 = /^-?\d{1,10}$/;

export function encodeBoardCursor(c: BoardCursor): string {
  return encodeCursor(KIND, [c.stateId, c.mark, String(c.priority), c.at, c.id]);
}

/** The cursor of column `stateId`; malformed, foreign or another column's: 400 `bad_cursor`. */
export function decodeBoardCursor(raw: string, stateId: string): BoardCursor {
  const [state, mark, priority, at, id] = decodeCursor(raw, KIND, 5) as [string, string, string, string, string];
  const position = Number(priority);
  const ok =
    state === stateId &&
    /^\d{1,18}$/.test(mark) &&
    INT32.test(priority) &&
    // negated in SQL, so the int range's lowest value has no counterpart
    position > -2147483648 &&
    position <= 2147483647 &&
    isMicrosTimestamp(at) &&
    UUID_PATTERN.test(id);
  if (!ok) throw badCursor();
  return { stateId, mark, priority: position, at, id };
}

/** Splits the `key` of a board row (`<priority>,<updated_at>[,<mark>]`, see boardKey) into cursor parts. */
export function boardKeyParts(key: string): { priority: number; at: string; mark: string | undefined } {
  const [priority, at, mark] = key.split(',') as [string, string, string | undefined];
  return { priority: Number(priority), at, mark };
}
