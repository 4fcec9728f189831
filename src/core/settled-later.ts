/**
 * A statement started now and awaited later, once earlier checks have passed: writes send their
 * independent lookups together (one round trip on a transaction's connection; each round trip
 * costs both the web process and PostgreSQL CPU) and still refuse in their declared order. If an
 * earlier check throws first, nobody awaits this one: its rejection must not surface as an
 * unhandled rejection.
 */
export function settledLater<T>(read: Promise<T>): Promise<T> {
  read.catch(() => undefined);
  return read;
}
