import { afterAll, beforeAll, expect, it } from 'vitest';
import { connect } from '../src/db/connect.ts';
import { testDb, type TestDb } from './helpers/db.ts';

/**
 * A pool's unused connections close after its idle time (db/connect.ts): 30 s for commands and
 * tests, SERVICE_IDLE_SECONDS for the web and worker processes (src/main.ts), whose first write
 * after a quiet minute otherwise paid a new backend's cold caches and plans.
 */
let db: TestDb;
beforeAll(async () => {
  db = await testDb();
});
afterAll(() => db.close());

const backends = async (name: string) => {
  const [row] = await db.sql<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where application_name = ${name}`;
  return row!.n;
};

it('an unused connection closes after the pool’s idle time, and stays open within it', async () => {
  const short = connect(`${db.url}?application_name=idle-short`, { max: 1, idleSeconds: 1 });
  const long = connect(`${db.url}?application_name=idle-long`, { max: 1, idleSeconds: 600 });
  try {
    await Promise.all([short`select 1`, long`select 1`]);
    expect([await backends('idle-short'), await backends('idle-long')]).toEqual([1, 1]);
    await new Promise((r) => setTimeout(r, 2500));
    expect([await backends('idle-short'), await backends('idle-long')]).toEqual([0, 1]);
  } finally {
    await Promise.all([short.end(), long.end()]);
  }
});
