import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Ctx } from '../src/core/ctx.ts';
import { allocateJob, pollJob } from '../src/core/jobs/catalog.ts';
import { enqueue } from '../src/core/jobs/enqueue.ts';
import { deleteFinishedQueuedJobs } from '../src/core/jobs/retention.ts';
import { actOnFailed, retryJob } from '../src/core/ops/job-actions.ts';
import { cancelJob } from '../src/core/ops/job-controls.ts';
import { jobDetail, searchJobs } from '../src/core/ops/job-search.ts';
import { failedJobs, queueCounts } from '../src/core/ops/jobs.ts';
import { runOp } from '../src/core/operation.ts';
import { testDb, type TestDb } from './helpers/db.ts';
import { makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { consoleAdminCtx } from './helpers/console-ctx.ts';

/**
 * The console's job views read graphile-worker's public `jobs` view and the project's own
 * `queued_jobs` (sql/076), never the library's private tables: each workspace sees, counts and
 * acts on its own jobs and the process's, never another workspace's.
 */
let db: TestDb;
let a: { ws: Workspace; admin: Person };
let b: { ws: Workspace; admin: Person };

beforeAll(async () => {
  db = await testDb();
  for (const which of ['a', 'b'] as const) {
    const ws = await makeWorkspace(db.sql);
    const side = { ws, admin: await makeUser(db.sql, ws, { role: 'admin' }) };
    if (which === 'a') a = side;
    else b = side;
  }
});
afterAll(() => db.close());

const ctxOf = (side: { ws: Workspace; admin: Person }): Ctx => consoleAdminCtx(db.sql, side);

/** A job queued by the core for the workspace, then failed for good through graphile-worker's public function. */
async function failedJob(ws: Workspace): Promise<string> {
  // a job of one attempt (a mailbox poll), so failing it for good leaves attempts = max = 1
  const payload = { workspaceId: ws.id, mailboxId: randomUUID() };
  await enqueue(db.sql, pollJob, payload);
  const [job] = await db.sql<{ id: string }[]>`select id::text from graphile_worker.jobs where key = ${pollJob.key(payload)}`;
  await db.sql`select graphile_worker.permanently_fail_jobs(${[job!.id]}::bigint[], 'went wrong')`;
  return job!.id;
}

it('enqueue records the workspace and payload beside the job, and each workspace sees only its own failed jobs', async () => {
  const jobA = await failedJob(a.ws);
  const jobB = await failedJob(b.ws);
  expect(await db.sql`select workspace_id as "workspaceId", task from queued_jobs where job_id = ${jobA}::bigint`).toEqual([
    { workspaceId: a.ws.id, task: pollJob.task },
  ]);

  const seenByA = await runOp(failedJobs, ctxOf(a), {});
  expect(seenByA.jobs.map((j) => j.id)).toEqual([jobA]);
  expect(seenByA.total).toBe(1);
  expect((await runOp(queueCounts, ctxOf(a), {})).reduce((n, q) => n + q.failed, 0)).toBe(1);
  expect((await runOp(failedJobs, ctxOf(b), {})).jobs.map((j) => j.id)).toEqual([jobB]);

  // the payload is searchable by its own workspace only
  const payloadText = (await db.sql<{ p: string }[]>`select payload->>'mailboxId' as p from queued_jobs where job_id = ${jobB}::bigint`)[0]!.p;
  expect((await runOp(searchJobs, ctxOf(b), { q: payloadText })).live.map((j) => j.id)).toEqual([jobB]);
  expect((await runOp(searchJobs, ctxOf(a), { q: payloadText })).live).toEqual([]);
  await expect(runOp(jobDetail, ctxOf(a), { jobId: jobB })).rejects.toMatchObject({ code: 'not_found' });

  // A cannot retry or cancel B's job, by id or in bulk
  await expect(runOp(retryJob, ctxOf(a), { jobId: jobB })).rejects.toMatchObject({ code: 'conflict' });
  await expect(runOp(cancelJob, ctxOf(a), { jobId: jobB })).rejects.toMatchObject({ code: 'conflict' });
  expect(await runOp(actOnFailed, ctxOf(a), { action: 'retry' })).toBe(1);
  const [bAfter] = await db.sql<{ attempts: number; max: number; due: boolean }[]>`
    select attempts, max_attempts as max, run_at <= now() as due from graphile_worker.jobs where id = ${jobB}::bigint`;
  expect(bAfter).toMatchObject({ attempts: 1, max: 1 });

  // A's retry went through graphile-worker's reschedule_jobs: one more attempt allowed, due now
  const [aAfter] = await db.sql<{ attempts: number; max: number; due: boolean }[]>`
    select attempts, max_attempts as max, run_at <= now() as due from graphile_worker.jobs where id = ${jobA}::bigint`;
  expect(aAfter).toEqual({ attempts: 1, max: 2, due: true });

  // B cancels its own: the job and its queued_jobs row go, A's stays
  expect(await runOp(cancelJob, ctxOf(b), { jobId: jobB })).toBe(1);
  expect(await db.sql`select 1 from graphile_worker.jobs where id = ${jobB}::bigint`).toEqual([]);
  expect(await db.sql`select 1 from queued_jobs where job_id = ${jobB}::bigint`).toEqual([]);
  expect(await db.sql`select 1 from queued_jobs where job_id = ${jobA}::bigint`).toHaveLength(1);
});

it('a job queued by the crontab (no queued_jobs row) is the process’s: every workspace sees it', async () => {
  const [job] = await db.sql<
    { id: string }[]
  >`select (graphile_worker.add_job('sessions:cleanup', '{}'::json, job_key => ${`cron-${randomUUID()}`})).id::text as id`;
  await db.sql`select graphile_worker.permanently_fail_jobs(${[job!.id]}::bigint[], 'cleanup failed')`;
  for (const side of [a, b]) expect((await runOp(failedJobs, ctxOf(side), { task: 'sessions:cleanup' })).jobs.map((j) => j.id)).toEqual([job!.id]);
  await db.sql`select graphile_worker.complete_jobs(${[job!.id]}::bigint[])`;
});

it('history:cleanup forgets queued_jobs rows whose job is gone', async () => {
  const payload = { workspaceId: a.ws.id, runId: randomUUID() };
  await enqueue(db.sql, allocateJob, payload);
  const [job] = await db.sql<{ id: string }[]>`select id::text from graphile_worker.jobs where key = ${allocateJob.key(payload)}`;
  // a worker that crashed after graphile-worker deleted the job, before the history wrapper forgot it
  await db.sql`select graphile_worker.complete_jobs(${[job!.id]}::bigint[])`;
  expect(await db.sql`select 1 from queued_jobs where job_id = ${job!.id}::bigint`).toHaveLength(1);
  expect(await deleteFinishedQueuedJobs(db.sql)).toBeGreaterThanOrEqual(1);
  expect(await db.sql`select 1 from queued_jobs where job_id = ${job!.id}::bigint`).toEqual([]);
});
