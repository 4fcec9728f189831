import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { crontab } from '../src/core/jobs/catalog.ts';
import { deleteOldJobHistory } from '../src/core/jobs/retention.ts';
import { startWorker, type StartedWorker } from '../src/jobs/worker.ts';
import { makeLogger } from '../src/log.ts';
import { testDb, type TestDb } from './helpers/db.ts';
import { waitUntil } from './helpers/spawn.ts';

// Issue 13: job_history keeps JOB_HISTORY_RETENTION_DAYS (30 by default); an hourly task deletes
// older rows in batches, and is itself recorded in job_history like every task.

let db: TestDb;
let worker: StartedWorker | undefined;

beforeAll(async () => {
  db = await testDb();
}, 60_000);
afterAll(async () => {
  await worker?.stop();
  await db?.close();
});

/** `n` finished attempts of a task that started `daysAgo` days ago. */
async function history(task: string, n: number, daysAgo: number) {
  await db.sql`
    insert into job_history (task, attempt, outcome, started_at, finished_at, duration_ms)
    select ${task}, 1, 'succeeded', now() - make_interval(days => ${daysAgo}), now() - make_interval(days => ${daysAgo}), 10
    from generate_series(1, ${n})`;
}
const countOf = async (task: string) => (await db.sql<{ n: number }[]>`select count(*)::int as n from job_history where task = ${task}`)[0]!.n;

it('keeps 30 days by default, configurable, and runs hourly', () => {
  expect(loadConfig({}).JOB_HISTORY_RETENTION_DAYS).toBe(30);
  expect(loadConfig({ JOB_HISTORY_RETENTION_DAYS: '7' }).JOB_HISTORY_RETENTION_DAYS).toBe(7);
  expect(() => loadConfig({ JOB_HISTORY_RETENTION_DAYS: '0' })).toThrow(/JOB_HISTORY_RETENTION_DAYS/);
  expect(crontab.split('\n')).toContain('41 * * * * history:cleanup');
});

it('deletes only the rows older than the retention, batch after batch', async () => {
  await history('test:batched-old', 23, 11);
  await history('test:batched-new', 4, 9);
  expect(await deleteOldJobHistory(db.sql, 10, 5)).toBe(23);
  expect(await countOf('test:batched-old')).toBe(0);
  expect(await countOf('test:batched-new')).toBe(4);
  expect(await deleteOldJobHistory(db.sql, 10, 5)).toBe(0);
});

it('runs as a worker task reading JOB_HISTORY_RETENTION_DAYS, and records its own attempt', async () => {
  await history('test:worker-old', 6, 31);
  await history('test:worker-kept', 3, 29);
  const services = { sql: db.sql, now: () => new Date(), log: makeLogger('silent'), pdf: null, mailer: null as never, mailFrom: 'x@localhost' };
  process.env.JOB_HISTORY_RETENTION_DAYS = '30';
  worker = await startWorker(db.url, services, { concurrency: 1, pollInterval: 100 });
  await db.sql`select graphile_worker.add_job('history:cleanup', '{}'::json)`;
  const run = await waitUntil(
    'the cleanup recorded',
    async () => (await db.sql`select outcome, duration_ms from job_history where task = 'history:cleanup' and outcome <> 'running'`)[0],
    30_000,
  );
  expect(run.outcome).toBe('succeeded');
  expect(await countOf('test:worker-old')).toBe(0);
  expect(await countOf('test:worker-kept')).toBe(3);
}, 60_000);
