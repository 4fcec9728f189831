import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onCachedPlan, type Db } from '../src/db/connect.ts';
import { byteRows, intOf, textOf } from '../src/db/raw.ts';
import { jsonArrayParts, jsonBytes, jsonText } from '../src/core/json-text.ts';
import { testDb, type TestDb } from './helpers/db.ts';

/**
 * The pieces answers are sent from as bytes (core/json-text.ts, db/raw.ts) and the cached-plan
 * setting the board's "my work" statement relies on (db/connect.ts `onCachedPlan`).
 */

let db: TestDb;
beforeAll(async () => {
  db = await testDb();
});
afterAll(() => db.close());

describe('answers as bytes', () => {
  it('byteRows gives each column as the bytes PostgreSQL sent, by name; null stays null; unselected columns read as null', async () => {
    const rows = await byteRows<'j' | 'n' | 't' | 'z' | 'absent'>(
      db.sql`select json_build_object('a', 'ü "q"', 'b', 1) as j, 42 as n, 'ünï' as t, null::text as z from generate_series(1, 2)`,
    );
    expect(rows).toHaveLength(2);
    const [row] = rows;
    expect(Buffer.isBuffer(row!.j)).toBe(true);
    expect(JSON.parse(row!.j!.toString('utf8'))).toEqual({ a: 'ü "q"', b: 1 });
    expect(intOf(row!.n)).toBe(42);
    expect(textOf(row!.t)).toBe('ünï');
    expect(row!.z).toBeNull();
    expect(textOf(row!.z)).toBeNull();
    expect(textOf(row!.absent)).toBeNull();
    expect(intOf(row!.absent)).toBeNull();
  });

  it('jsonText joins the process’s text and PostgreSQL’s bytes in order, as utf-8, without reading them', async () => {
    const [row] = await byteRows<'s'>(db.sql`select json_agg(x) as s from (values ('ä'), ('b')) v(x)`);
    const body = jsonText(['{"items":', ...jsonArrayParts([row!.s!, '"ö"', Buffer.from('3')]), ',"next":null}']).jsonText;
    expect(JSON.parse(body.toString('utf8'))).toEqual({ items: [['ä', 'b'], 'ö', 3], next: null });
    expect(jsonBytes('é').equals(Buffer.from([0xc3, 0xa9]))).toBe(true);
    expect(jsonArrayParts([])).toEqual(['[', ']']);
  });
});

describe('onCachedPlan', () => {
  const mode = (sql: Db) => byteRows<'mode'>(sql`select current_setting('plan_cache_mode') as mode`);

  it('sets the generic plan before the statement, however many awaits the statement comes after, for that transaction only', async () => {
    const late = async (sql: Db) => {
      await Promise.resolve();
      await new Promise((r) => setImmediate(r));
      return mode(sql);
    };
    for (const run of [mode, late, (sql: Db) => sql`select current_setting('plan_cache_mode') as mode`]) {
      const [row] = await onCachedPlan(db.sql, run as (sql: Db) => Promise<{ mode: unknown }[]>);
      const value = row!.mode;
      expect(Buffer.isBuffer(value) ? value.toString() : value).toBe('force_generic_plan');
    }
    const [after] = await db.sql<{ mode: string }[]>`select current_setting('plan_cache_mode') as mode`;
    expect(after!.mode).toBe('auto');
  });
});
