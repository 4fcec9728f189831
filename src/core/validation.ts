import { z } from 'zod';
import { invalid } from './errors.ts';

const uuid = z.uuid();

/** A UUID in any case (PostgreSQL reads both), unanchored, for composing into a larger pattern. */
export const UUID_SOURCE = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';

/** A whole value that is a UUID, for ids met outside a zod schema: a `{ref}`, a name-or-id argument, the id inside a cursor. */
export const UUID_PATTERN = new RegExp(`^${UUID_SOURCE}$`);

/** A path or query id: anything but a UUID is a 400, never a database error. */
export function parseUuid(value: unknown, field = 'id'): string {
  const r = uuid.safeParse(value);
  if (!r.success) throw invalid('bad_uuid', { field }, `${field} must be a UUID.`);
  return r.data.toLowerCase();
}
