import { z } from 'zod';
import { invalid } from './errors.ts';

const uuid = z.uuid();

/** A path or query id: anything but a UUID is a 400, never a database error. */
export function parseUuid(value: unknown, field = 'id'): string {
  const r = uuid.safeParse(value);
  if (!r.success) throw invalid('bad_uuid', { field }, `${field} must be a UUID.`);
  return r.data.toLowerCase();
}

/** Parses with a zod schema; failures become 400 `invalid` through the error middleware. */
export function parse<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  return schema.parse(value);
}
