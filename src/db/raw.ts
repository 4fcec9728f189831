/** What byteRows needs of a postgres.js query: `raw()`, whose rows are arrays of bytes beside the columns' names. */
interface RawQuery {
  raw(): PromiseLike<readonly (readonly unknown[])[] & { columns: readonly { name: string }[] }>;
}

/** A row whose columns are the bytes PostgreSQL sent (null for SQL null), by column name. */
export type ByteRow<K extends string> = Record<K, Buffer | null>;

/**
 * The rows of `query` with every column as the bytes PostgreSQL sent (its text format, utf-8),
 * for answers passed on without being read (core/json-text.ts): postgres.js's `raw()` keeps each
 * value as a slice of the message it arrived in instead of decoding it into a string. Columns the
 * caller needs as values it decodes with `textOf` / `intOf`.
 */
export async function byteRows<K extends string>(query: RawQuery): Promise<ByteRow<K>[]> {
  const result = await query.raw();
  const names = result.columns.map((c) => c.name as K);
  return result.map((values) => {
    const row = {} as ByteRow<K>;
    names.forEach((name, i) => (row[name] = (values[i] as Buffer | null | undefined) ?? null));
    return row;
  });
}

/** A text column of a byte row (null, or a column the statement did not select, is null). */
export function textOf(value: Buffer | null | undefined): string | null {
  return value == null ? null : value.toString('utf8');
}

/** An integer column of a byte row (null, or a column the statement did not select, is null). */
export function intOf(value: Buffer | null | undefined): number | null {
  return value == null ? null : Number(value.toString('latin1'));
}
