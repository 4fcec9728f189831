import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Ctx } from '../src/core/ctx.ts';
import { allocateJob } from '../src/core/jobs/catalog.ts';
import { enqueue } from '../src/core/jobs/enqueue.ts';
import { cancelJob } from '../src/core/ops/job-controls.ts';
import { jobQueueNow } from '../src/core/ops/job-live.ts';
import { failedJobs } from '../src/core/ops/jobs.ts';
import { taskSeries } from '../src/core/ops/job-queue.ts';
import type { CrontabItem } from '../src/core/ops/crontab.ts';
import { WholeHoursCache, type WholeHours } from '../src/core/ops/stats-cache.ts';
import { crontabView, taskStats, type CronEntry } from '../src/core/ops/stats.ts';
import { runOp } from '../src/core/operation.ts';
import type { Db } from '../src/db/connect.ts';
import { testDb, type TestDb } from './helpers/db.ts';
import { makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { tuplesReadBy } from './helpers/table-reads.ts';
import { consoleAdminCtx } from './helpers/console-ctx.ts';

/**
 * Issue 25: /ops/jobs reads the live queue in one statement, the failed list in one, the
 * statistics' completed hours once per hour and workspace in a web process, and each crontab
 * task's last attempt through its index. The answers stay those of the statements before.
 */
let db: TestDb;
let a: { ws: Workspace; admin: Person };
let b: { ws: Workspace; admin: Person };

beforeAll(async () => {
  db = await testDb();
  const sides: { ws: Workspace; admin: Person }[] = [];
  for (let i = 0; i < 2; i++) {
    const ws = await makeWorkspace(db.sql);
    sides.push({ ws, admin: await makeUser(db.sql, ws, { role: 'admin' }) });
  }
  [a, b] = sides as [typeof a, typeof b];
});
afterAll(() => db.close());

const ctxOf = (side: { ws: Workspace; admin: Person }, extra: Partial<Ctx> = {}, sql: Db = db.sql): Ctx => consoleAdminCtx(sql, side, {}, extra);

/** The counts as the page counted them before (one left join of graphile-worker's view with queued_jobs per read). */
async function countedBefore(ws: Workspace) {
  return db.sql`
    select j.task_identifier as task, j.queue_name as queue,
           count(*) filter (where j.locked_at is null and j.last_error is null and j.run_at <= now())::int as waiting,
           count(*) filter (where j.locked_at is null and j.last_error is null and j.run_at > now())::int as scheduled,
           count(*) filter (where j.locked_at is not null)::int as running,
           count(*) filter (where j.locked_at is null and j.last_error is not null)::int as failed,
           min(j.run_at) filter (where j.locked_at is null and j.last_error is null and j.run_at <= now()) as "oldestWaiting"
    from graphile_worker.jobs j left join queued_jobs qj on qj.job_id = j.id
    where qj.workspace_id is null or qj.workspace_id = ${ws.id}::uuid
    group by 1, 2 order by 1, 2 nulls first`;
}

async function expectCountsAsBefore() {
  for (const side of [a, b]) expect((await runOp(jobQueueNow, ctxOf(side), {})).counts).toEqual([...(await countedBefore(side.ws))]);
}

const idOf = async (key: string) => (await db.sql<{ id: string }[]>`select id::text from graphile_worker.jobs where key = ${key}`)[0]!.id;

it('the live queue counts and lists the workspace’s jobs and the process’s through enqueue, start, failure, completion and cancel', async () => {
  await expectCountsAsBefore();
  // queued by the core: waiting, scheduled; another workspace's
  const waiting = { workspaceId: a.ws.id, runId: randomUUID() };
  const scheduled = { workspaceId: a.ws.id, runId: randomUUID() };
  const theirs = { workspaceId: b.ws.id, runId: randomUUID() };
  await enqueue(db.sql, allocateJob, waiting);
  await enqueue(db.sql, allocateJob, scheduled, { runAt: new Date(Date.now() + 3_600_000) });
  await enqueue(db.sql, allocateJob, theirs);
  // added by graphile-worker itself (a crontab job: no queued_jobs row), and a queued_jobs row naming no workspace
  const [cron] = await db.sql<
    { id: string }[]
  >`select (graphile_worker.add_job('sessions:cleanup', '{}'::json, job_key => ${`cron-${randomUUID()}`})).id::text as id`;
  const [orphan] = await db.sql<
    { id: string }[]
  >`select (graphile_worker.add_job('history:cleanup', '{}'::json, job_key => ${`old-${randomUUID()}`})).id::text as id`;
  await db.sql`insert into queued_jobs (job_id, workspace_id, task, payload) values (${orphan!.id}::bigint, null, 'history:cleanup', '{}')`;
  await expectCountsAsBefore();

  const live = await runOp(jobQueueNow, ctxOf(a), {});
  const mine = [await idOf(allocateJob.key(waiting)), cron!.id, orphan!.id];
  expect(
    live.queued
      .filter((q) => q.state === 'waiting')
      .map((q) => q.id)
      .sort(),
  ).toEqual([...mine].sort());
  expect(live.queued.filter((q) => q.state === 'scheduled').map((q) => q.id)).toEqual([await idOf(allocateJob.key(scheduled))]);
  expect((await runOp(jobQueueNow, ctxOf(b), {})).queued.map((q) => q.id)).not.toContain(await idOf(allocateJob.key(waiting)));

  // a worker starts A's waiting job and the cron job (a test may write the library's tables; the project never does)
  const started = [await idOf(allocateJob.key(waiting)), cron!.id];
  await db.sql`update graphile_worker._private_jobs set locked_by = 'page-reads-worker', locked_at = now(), attempts = attempts + 1 where id = any(${started}::bigint[])`;
  await expectCountsAsBefore();
  const running = await runOp(jobQueueNow, ctxOf(a), {});
  expect(running.running.map((r) => r.id).sort()).toEqual([...started].sort());
  expect(running.running.every((r) => r.lockedAt instanceof Date && r.lockedBy === 'page-reads-worker' && !r.workerAlive)).toBe(true);
  expect(running.workers).toEqual([{ process: null, workerIds: ['page-reads-worker'], startedAt: null, beatAt: null, alive: false, running: 2 }]);
  expect((await runOp(jobQueueNow, ctxOf(b), {})).workers).toEqual([
    { process: null, workerIds: ['page-reads-worker'], startedAt: null, beatAt: null, alive: false, running: 1 },
  ]);

  // the allocation fails (waiting for its retry), the cron job completes
  await db.sql`
    update graphile_worker._private_jobs set locked_by = null, locked_at = null, last_error = 'Run 1234567 was not found', run_at = now() + interval '1 minute'
    where id = ${started[0]!}::bigint`;
  await db.sql`select graphile_worker.complete_jobs(${[cron!.id]}::bigint[])`;
  await expectCountsAsBefore();
  const failed = await runOp(failedJobs, ctxOf(a), {});
  expect(failed.jobs.map((j) => j.id)).toEqual([started[0]]);
  expect(failed.jobs[0]).toMatchObject({ errorGroup: 'Run <n> was not found', lastError: 'Run 1234567 was not found', attempts: 1 });
  expect(failed.jobs[0]!.failedAt).toBeInstanceOf(Date);
  expect(failed.jobs[0]!.nextRun).toBeInstanceOf(Date);
  expect(failed.groups).toEqual([{ error: 'Run <n> was not found', task: allocateJob.task, count: 1 }]);
  expect(failed.total).toBe(1);
  expect(await runOp(failedJobs, ctxOf(a), { error: 'no such group' })).toMatchObject({ jobs: [], total: 0, groups: failed.groups });
  expect((await runOp(failedJobs, ctxOf(b), {})).total).toBe(0);

  // cancels: the failed one and the scheduled one
  await runOp(cancelJob, ctxOf(a), { jobId: started[0]! });
  await runOp(cancelJob, ctxOf(a), { jobId: await idOf(allocateJob.key(scheduled)) });
  await expectCountsAsBefore();
  expect((await runOp(jobQueueNow, ctxOf(a), {})).queued.map((q) => q.id)).toEqual([orphan!.id]);
  await db.sql`select graphile_worker.complete_jobs(array[${orphan!.id}::bigint, ${await idOf(allocateJob.key(theirs))}::bigint])`;
});

/** Attempts `minutesAgo` minutes back, `n` of them, of `task` in workspace `ws` (null: the process's). */
async function attempts(task: string, ws: string | null, minutesAgo: number, n: number) {
  await db.sql`
    insert into job_history (job_id, task, attempt, workspace_id, outcome, started_at, finished_at, duration_ms)
    select 700000000 + g, ${task}, 1, ${ws}::uuid, 'succeeded', now() - make_interval(mins => ${minutesAgo}), now() - make_interval(mins => ${minutesAgo}), 40
    from generate_series(1, ${n}) g`;
}

/** The process's copy on the test's clock: it expires when the test moves the clock, not when a loaded machine gets there. */
let clock = Date.now();
class ClockedCache extends WholeHoursCache {
  override get(key: string, load: () => Promise<WholeHours>): Promise<WholeHours> {
    return super.get(key, load, clock);
  }
}

/**
 * The copy is keyed by the UTC hour (the database's now()): a test straddling the hour's turn
 * would meet a new key half-way. It starts clear of the turn instead (waits at most a minute).
 */
async function clearOfHourTurn(marginMs = 60_000): Promise<void> {
  const left = 3_600_000 - (Date.now() % 3_600_000);
  if (left < marginMs) await new Promise((r) => setTimeout(r, left + 1000));
}

it(
  'a web process reads the completed hours once per hour: the same answers, a change to a completed hour shows within the copy’s minute',
  { timeout: 150_000 },
  async () => {
    await clearOfHourTurn();
    await attempts('page:render', a.ws.id, 3 * 60, 5);
    await attempts('page:render', null, 30 * 60, 4);
    await attempts('page:render', a.ws.id, 10, 2);
    const cached = ctxOf(a, { caches: { jobStats: new ClockedCache(300) } as Ctx['caches'] });
    const fresh = ctxOf(a);
    expect(await runOp(taskStats, cached, {})).toEqual(await runOp(taskStats, fresh, {}));
    expect(await runOp(taskSeries, cached, {})).toEqual(await runOp(taskSeries, fresh, {}));

    // an attempt of 3 hours ago written now: the last hour is read afresh, a completed hour comes from the copy until it expires
    await attempts('page:render', a.ws.id, 3 * 60, 1);
    await attempts('page:render', a.ws.id, 0, 1);
    const day = async (ctx: Ctx) => (await runOp(taskStats, ctx, {})).stats.find((s) => s.task === 'page:render' && s.window === '24h')!.finished;
    const hour = async (ctx: Ctx) => (await runOp(taskStats, ctx, {})).stats.find((s) => s.task === 'page:render' && s.window === '1h')!.finished;
    expect(await hour(cached)).toBe(3);
    expect(await day(fresh)).toBe(9);
    expect(await day(cached)).toBe(8);
    clock += 350;
    expect(await day(cached)).toBe(9);
    expect(await runOp(taskSeries, cached, {})).toEqual(await runOp(taskSeries, fresh, {}));
  },
);

it('the copy of the completed hours: one read per key while fresh, a new key or an expired one reads again, a failed read is not kept', async () => {
  const cache = new WholeHoursCache(1000);
  let reads = 0;
  const load = () => Promise.resolve({ hours: [], buckets: [{ task: 't', recent: true, b: ++reads, n: 1 }] });
  const first = await cache.get('ws 1', load, 0);
  expect(await cache.get('ws 1', load, 999)).toBe(first);
  expect(reads).toBe(1);
  await cache.get('ws 2', load, 999);
  expect(reads).toBe(2);
  expect(await cache.get('ws 1', load, 1000)).not.toBe(first);
  expect(reads).toBe(3);
  await expect(cache.get('ws 3', () => Promise.reject(new Error('down')), 1000)).rejects.toThrow('down');
  await cache.get('ws 3', load, 1001);
  expect(reads).toBe(4);
});

const historyTuplesReadBy = (t: TestDb, fn: (sql: Db) => Promise<unknown>) => tuplesReadBy(t, 'job_history', fn);

it('the crontab view reads one attempt per task through the task index, also for a task that never ran', async () => {
  // a database of its own: no other connection reads job_history meanwhile
  const own = await testDb();
  try {
    await own.sql`
      insert into job_history (job_id, task, attempt, outcome, started_at, finished_at, duration_ms)
      select 600000000 + g, 'sessions:cleanup', 1, 'succeeded', now() - make_interval(secs => g), now(), 5 from generate_series(1, 40000) g`;
    await own.sql`analyze job_history`;
    const item = (task: string): CrontabItem => ({ task, identifier: task, schedule: '* * * * *', match: () => true });
    const crontab = [item('sessions:cleanup'), item('history:cleanup'), item('mail:schedule')];
    let entries: CronEntry[] = [];
    const read = await historyTuplesReadBy(own, async (sql) => {
      for (let i = 0; i < 7; i++) entries = await runOp(crontabView, ctxOf(a, { crontab }, sql), {});
    });
    expect(entries.map((e) => [e.task, e.lastOutcome])).toEqual([
      ['sessions:cleanup', 'succeeded'],
      ['history:cleanup', null],
      ['mail:schedule', null],
    ]);
    // before: the newest-first walk of started_at read all 40,000 attempts for each task that never ran
    expect(read).toBeLessThan(1000);
  } finally {
    await own.close();
  }
});
