import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import postgres from 'postgres';
import { connect, onCachedPlan, plannedPerCall, type Db } from '../src/db/connect.ts';
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
  const late = async (sql: Db) => {
    await Promise.resolve();
    await new Promise((r) => setImmediate(r));
    return mode(sql);
  };
  const runs = [mode, late, (sql: Db) => sql`select current_setting('plan_cache_mode') as mode`];
  const valueOf = (row: { mode: unknown } | undefined) => (Buffer.isBuffer(row!.mode) ? row!.mode.toString() : row!.mode);

  it('on a pool of `connect`: one statement on the sibling pool whose connections plan generically; the pool itself stays on auto', async () => {
    const sent: string[] = [];
    const sql = connect(db.url, { max: 2, debug: (_c, query) => sent.push(query.trim()) });
    try {
      await onCachedPlan(sql, mode); // the new pool's first connection reads the server's array types once
      for (const run of runs) {
        sent.length = 0;
        const [row] = await onCachedPlan(sql, run as (sql: Db) => Promise<{ mode: unknown }[]>);
        expect(valueOf(row)).toBe('force_generic_plan');
        expect(sent).toEqual([`select current_setting('plan_cache_mode') as mode`]); // no BEGIN, SET or COMMIT around it
      }
      const [after] = await sql<{ mode: string }[]>`select current_setting('plan_cache_mode') as mode`;
      expect(after!.mode).toBe('auto');
    } finally {
      await sql.end(); // ends the sibling too: its connections are gone from the server
    }
    const [left] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and query like '%plan_cache_mode%'`;
    expect(left!.n).toBe(0);
  });

  it('inside a transaction it runs as it is; on another pool it sets the generic plan before the statement, for that transaction only', async () => {
    await db.sql.begin(async (tx) => {
      const [row] = await onCachedPlan(tx as unknown as Db, mode);
      expect(valueOf(row)).toBe('auto');
    });
    const other = postgres(db.url, { max: 1, onnotice: () => {} }) as unknown as Db;
    try {
      for (const run of runs) {
        const [row] = await onCachedPlan(other, run as (sql: Db) => Promise<{ mode: unknown }[]>);
        expect(valueOf(row)).toBe('force_generic_plan');
      }
      const [after] = await other<{ mode: string }[]>`select current_setting('plan_cache_mode') as mode`;
      expect(after!.mode).toBe('auto');
    } finally {
      await other.end();
    }
  });
});

describe('plannedPerCall', () => {
  it('sends the statement unnamed, so PostgreSQL plans it for the values on every call; the same statement unmarked is prepared once', async () => {
    const sql = connect(db.url, { max: 1 });
    const kept = async () => {
      const [row] = await sql<{ n: number }[]>`select count(*)::int as n from pg_prepared_statements where statement like '%planned-per-call' || '-probe%'`; // not itself
      return row!.n;
    };
    try {
      const probe = () => sql`select ${1}::int as one, 'planned-per-call-probe' as probe`;
      for (let i = 0; i < 7; i++) await plannedPerCall(probe());
      expect(await kept()).toBe(0);
      for (let i = 0; i < 7; i++) await probe();
      expect(await kept()).toBe(1);
    } finally {
      await sql.end();
    }
  });
});
