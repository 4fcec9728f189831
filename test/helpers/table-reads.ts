import { connect, type Db } from '../../src/db/connect.ts';
import type { TestDb } from './db.ts';

/**
 * Rows PostgreSQL read from `table` (sequentially or through an index) in database `t` while `fn`
 * ran on a connection of its own: how a test shows a statement reads what an index allows, not
 * how long it takes. Counts arrive when the backend ends, so it waits (briefly) for them.
 */
export async function tuplesReadBy(t: TestDb, table: string, fn: (sql: Db) => Promise<unknown>): Promise<number> {
  const read = async () => {
    await t.sql`select pg_stat_clear_snapshot()`;
    const [r] = await t.sql<{ n: string }[]>`
      select (coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::text as n from pg_stat_user_tables where relname = ${table}`;
    return Number(r!.n);
  };
  const before = await read();
  const sql = connect(t.url, { max: 1 });
  await fn(sql);
  await sql.end(); // a backend that ends reports its counts
  let after = before;
  for (let i = 0; i < 50 && after === before; i++) {
    await new Promise((r) => setTimeout(r, 100));
    after = await read();
  }
  return after - before;
}
