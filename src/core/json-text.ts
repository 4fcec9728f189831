/**
 * A read's answer as JSON that PostgreSQL built, to be sent as it is. A board of 400 ticket
 * summaries is about 400 KB: postgres.js parsed the json column and Koa serialised the same data
 * again, 40 % of the web process's CPU per board (issue 25), while PostgreSQL had already written
 * the JSON. An operation that returns JsonText gives the REST door those bytes; doors that need the
 * value (MCP, CLI, tests) run the operation's object form, which reads the same SQL.
 *
 * The answer is kept as bytes (utf-8), not as a string: the json columns are read as the bytes
 * PostgreSQL sent (db/raw.ts) and joined with the few bytes the process writes around them.
 * Decoding 400 KB into a string, joining strings and encoding the result again for the socket cost
 * the web process 2.8-4.4 ms of CPU per board against 0.5-0.75 ms for the same bytes kept as
 * bytes (docs/decisions.md, "Answers kept as PostgreSQL's bytes").
 */
export interface JsonText {
  readonly jsonText: Buffer;
}

/** A piece of an answer: JSON text the process wrote, or JSON bytes PostgreSQL sent. */
export type JsonPart = string | Buffer;

/** The answer made of `parts` in order, each a piece of JSON: joined as bytes, none of them read. */
export function jsonText(parts: JsonPart | readonly JsonPart[]): JsonText {
  return { jsonText: jsonBytes(parts) };
}

/** `parts` joined as utf-8 bytes. */
export function jsonBytes(parts: JsonPart | readonly JsonPart[]): Buffer {
  if (Buffer.isBuffer(parts)) return parts;
  if (typeof parts === 'string') return Buffer.from(parts, 'utf8');
  return Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)));
}

export function isJsonText(value: unknown): value is JsonText {
  return typeof value === 'object' && value !== null && Buffer.isBuffer((value as { jsonText?: unknown }).jsonText);
}

/** The parts of `[a,b,c]` of JSON values `items`, each complete: nothing read. */
export function jsonArrayParts(items: readonly JsonPart[]): JsonPart[] {
  const parts: JsonPart[] = ['['];
  items.forEach((item, i) => (i ? parts.push(',', item) : parts.push(item)));
  parts.push(']');
  return parts;
}
