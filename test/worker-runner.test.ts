import { afterAll, beforeAll, expect, it } from 'vitest';
import { startWorker, type StartedWorker } from '../src/jobs/worker.ts';
import { makeLogger } from '../src/log.ts';
import { testDb, type TestDb } from './helpers/db.ts';
import { waitUntil } from './helpers/spawn.ts';

/**
 * Issue 20, defect 2: graphile-worker 0.17 ends its runner when its pool fails (PostgreSQL gone)
 * and `runner.promise` then resolves; the process kept beating and never took a job again.
 * Here the runner is ended from outside (its own `stop()`, as a failed pool ends it), which is
 * the same for the process: the runner is gone without the process having asked.
 */
let db: TestDb;
let worker: StartedWorker | undefined;

beforeAll(async () => {
  db = await testDb();
}, 60_000);
afterAll(async () => {
  await worker?.stop();
  await db?.close();
});

const heartbeatIds = async (processId: string) =>
  (await db.sql<{ worker_ids: string[] }[]>`select worker_ids from worker_heartbeats where process_id = ${processId}`)[0]?.worker_ids;
const addJob = async () => (await db.sql<[{ id: string }]>`select (graphile_worker.add_job('sessions:cleanup', '{}'::json)).id::text as id`)[0].id;
const jobGone = async (id: string) => (await db.sql`select 1 from graphile_worker.jobs where id = ${id}::bigint`).length === 0;

it('a runner that ends by itself is replaced; the heartbeat names only a running runner', async () => {
  const services = { sql: db.sql, now: () => new Date(), log: makeLogger('silent'), pdf: null, mailer: null as never, mailFrom: 'x@localhost' };
  worker = await startWorker(db.url, services, { concurrency: 1, pollInterval: 100, liveness: { intervalMs: 200, staleMs: 30_000 } });
  const processId = worker.liveness.processId;
  const first = await waitUntil('a heartbeat', () => heartbeatIds(processId), 10_000);
  expect(first.length).toBeGreaterThan(0);
  const job = await addJob();
  await waitUntil('the first runner takes a job', () => jobGone(job), 20_000);

  const ended = worker.current()!;
  await ended.stop();
  // The heartbeat no longer names the ended runner's pool (so its jobs could be freed), and a new runner takes jobs.
  const next = await waitUntil(
    'a new runner beats',
    async () => {
      const ids = await heartbeatIds(processId);
      return ids && ids.length > 0 && !ids.some((id) => first.includes(id)) ? ids : undefined;
    },
    20_000,
  );
  expect(worker.current()).not.toBe(ended);
  expect(next).not.toEqual(first);
  const after = await addJob();
  await waitUntil('the new runner takes a job', () => jobGone(after), 20_000);
}, 60_000);
