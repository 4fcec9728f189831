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

/**
 * The contract reasons of an operation's input fields whose malformed value is not the generic
 * `validation` (`estimateMinutes` -> `estimate_format`, a path id -> `bad_uuid`), keyed by the
 * operation's input schema: a zod registry, so the schema itself (and its JSON Schema) is unchanged.
 */
const fieldReasons = z.registry<{ reasons: Readonly<Record<string, string>> }>();

/** Registers the contract reasons of `schema`'s top-level fields (see parseInput) and returns the schema. */
export function withReasons<S extends z.ZodType>(schema: S, reasons: Readonly<Record<string, string>>): S {
  fieldReasons.add(schema, { reasons });
  return schema;
}

/** A path id inside an operation's input: a UUID, lower-cased; give its field the reason `bad_uuid` (withReasons). */
export const idField = (what: string) => z.uuid().toLowerCase().describe(what);

/**
 * The one way an operation reads its input: its own schema parses it once, after `authorize`.
 * A failing field with a reason of its own (withReasons; the first such field) is 400 with that
 * reason and `field`; any other failure is the ZodError, which `toAppError` (failures.ts) makes the
 * contract's 400 `validation` naming the first failing field.
 */
export function parseInput<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const r = schema.safeParse(raw ?? {});
  if (r.success) return r.data;
  const reasons = fieldReasons.get(schema)?.reasons;
  const hit = reasons && r.error.issues.find((i) => typeof i.path[0] === 'string' && Object.hasOwn(reasons, i.path[0]));
  if (!hit) throw r.error;
  const field = hit.path[0] as string;
  throw invalid(reasons[field]!, { field }, `${field}: ${hit.message}`);
}
