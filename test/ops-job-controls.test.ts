import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import type { Principal } from '../src/core/auth/principal.ts';
import type { Ctx } from '../src/core/ctx.ts';
import { allocateJob, crons } from '../src/core/jobs/catalog.ts';
import { enqueue } from '../src/core/jobs/enqueue.ts';
import { cancelJob, pauseTask, resumeTask, runJobNow } from '../src/core/ops/job-controls.ts';
import { jobTasks, queuedJobs, taskSeries, workerList } from '../src/core/ops/job-queue.ts';
import { failedJobs } from '../src/core/ops/jobs.ts';
import { runOp } from '../src/core/operation.ts';
import { createMailer } from '../src/jobs/machinery/mail-from-config.ts';
import { startWorker } from '../src/jobs/worker.ts';
import type { Db } from '../src/db/connect.ts';
import { makeLogger } from '../src/log.ts';
import { testDb, type TestDb } from './helpers/db.ts';
import { makeBillingRun, makePeriod, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { consoleAdminCtx } from './helpers/console-ctx.ts';

/**
 * The console's job controls (issue 26) through the core: cancel and "run now" of jobs not yet
 * run, pausing a task (a real graphile-worker never takes a paused task's job), error groups by a
 * normalised message, and who may use the controls.
 */
let db: TestDb;
let a: { ws: Workspace; admin: Person };
let b: { ws: Workspace; admin: Person };

beforeAll(async () => {
  db = await testDb();
  for (const which of ['a', 'b'] as const) {
    const ws = await makeWorkspace(db.sql);
    const side = { ws, admin: await makeUser(db.sql, ws, { role: 'admin', name: `Admin ${which.toUpperCase()}` }) };
    if (which === 'a') a = side;
    else b = side;
  }
});
afterAll(() => db.close());

const ctxOf = (side: { ws: Workspace; admin: Person }, over: Partial<Principal> = {}): Ctx =>
  consoleAdminCtx(db.sql, side, { name: `Admin of ${side.ws.slug}`, ...over });

/** An allocation job of the workspace (its run does not exist: the attempt fails, which is all these tests need of it). */
async function allocate(ws: Workspace, runAt?: Date): Promise<string> {
  const payload = { workspaceId: ws.id, runId: randomUUID() };
  // read back in the enqueuing transaction: once committed, a running worker may take the job, fail
  // it for good (its run does not exist) and remove it before a later read finds it
  return db.sql.begin(async (tx) => {
    await enqueue(tx as unknown as Db, allocateJob, payload, runAt ? { runAt } : {});
    const [job] = await tx<{ id: string }[]>`select id::text from graphile_worker.jobs where key = ${allocateJob.key(payload)}`;
    return job!.id;
  });
}

const job = async (id: string) =>
  (
    await db.sql<{ attempts: number; locked: boolean; priority: number; due: boolean }[]>`
      select attempts, locked_at is not null as locked, priority, run_at <= now() as due from graphile_worker.jobs where id = ${id}::bigint`
  )[0];
const attempts = async (id: string) => (await db.sql`select 1 from job_history where job_id = ${id}::bigint`).length;

it('groups failed jobs by a normalised message: a validation error by its issues, ids and long numbers left out', async () => {
  const schema = z.object({ runId: z.uuid(), format: z.enum(['html', 'pdf']) });
  const noRun = schema.safeParse({ format: 'pdf' }).error!.message; // a ZodError's message: JSON, first line "["
  const badFormat = schema.safeParse({ runId: randomUUID(), format: 'doc' }).error!.message;
  const messages = [noRun, noRun, badFormat, `Run ${randomUUID()} was not found (after 12000 ms)`, `Run ${randomUUID()} was not found (after 30500 ms)`];
  const ids: string[] = [];
  for (const m of messages) {
    const id = await allocate(a.ws);
    await db.sql`select graphile_worker.permanently_fail_jobs(${[id]}::bigint[], ${m})`;
    ids.push(id);
  }
  const { groups } = await runOp(failedJobs, ctxOf(a), {});
  const count = (error: string) => groups.find((g) => g.error === error)?.count;
  expect(groups.map((g) => g.error)).not.toContain('[');
  expect(count('runId: Invalid input: expected string, received undefined')).toBe(2);
  expect(count('format: Invalid option: expected one of "html"|"pdf"')).toBe(1);
  expect(count('Run <id> was not found (after <n> ms)')).toBe(2);
  // the filter by a group selects exactly its jobs
  const picked = await runOp(failedJobs, ctxOf(a), { error: 'Run <id> was not found (after <n> ms)' });
  expect(picked.jobs.map((j) => j.id).sort()).toEqual(ids.slice(3).sort());
  await db.sql`select graphile_worker.complete_jobs(${ids}::bigint[])`;
});

it('cancels a waiting or scheduled job, and runs one now: due at once and ahead of the rest', async () => {
  const waiting = await allocate(a.ws);
  const scheduled = await allocate(a.ws, new Date(Date.now() + 3_600_000));
  expect((await runOp(queuedJobs, ctxOf(a), {})).find((j) => j.id === scheduled)).toMatchObject({ state: 'scheduled', paused: false });

  await runOp(runJobNow, ctxOf(a), { jobId: scheduled });
  expect(await job(scheduled)).toMatchObject({ due: true, priority: -1, attempts: 0 });
  // the waiting list is in the order a worker takes jobs: the one run now comes first
  const queued = await runOp(queuedJobs, ctxOf(a), {});
  expect(queued.filter((j) => j.state === 'waiting').map((j) => j.id)).toEqual([scheduled, waiting]);

  expect(await runOp(cancelJob, ctxOf(a), { jobId: waiting })).toBe(1);
  expect(await job(waiting)).toBeUndefined();
  expect(await db.sql`select 1 from queued_jobs where job_id = ${waiting}::bigint`).toEqual([]);
  expect(await runOp(cancelJob, ctxOf(a), { jobId: scheduled })).toBe(1);

  const audit = await db.sql`select action, target, outcome from ops_audit where workspace_id = ${a.ws.id} order by id`;
  expect(audit).toEqual([
    { action: 'job.run_now', target: `job ${scheduled}`, outcome: 'succeeded' },
    { action: 'job.cancel', target: `job ${waiting}`, outcome: 'succeeded' },
    { action: 'job.cancel', target: `job ${scheduled}`, outcome: 'succeeded' },
  ]);
});

it('cancelling a waiting allocation fails its run at once (it can be started again), rather than leaving it allocating for ever', async () => {
  const period = await makePeriod(db.sql, a.ws, { start: '2026-03-01', end: '2026-03-31', closed: true });
  const run = await makeBillingRun(db.sql, a.ws, { periodId: period.id, status: 'allocating' });
  const payload = { workspaceId: a.ws.id, runId: run.id };
  await enqueue(db.sql, allocateJob, payload);
  const [queued] = await db.sql<{ id: string }[]>`select id::text from graphile_worker.jobs where key = ${allocateJob.key(payload)}`;
  expect(await runOp(cancelJob, ctxOf(a), { jobId: queued!.id })).toBe(1);
  const [row] = await db.sql<{ status: string; error: string | null }[]>`select status, error from billing_runs where id = ${run.id}`;
  expect(row).toEqual({ status: 'failed', error: expect.stringContaining('An operator cancelled the job.') });
});

it('refuses to run now a failed job, a paused task’s, a job no worker handles, and to touch a running job or another workspace’s', async () => {
  const failed = await allocate(a.ws);
  await db.sql`select graphile_worker.permanently_fail_jobs(${[failed]}::bigint[], 'went wrong')`;
  await expect(runOp(runJobNow, ctxOf(a), { jobId: failed })).rejects.toMatchObject({ details: { reason: 'job_failed' } });

  const [orphan] = await db.sql<{ id: string }[]>`select (graphile_worker.add_job('reports:nightly', '{}'::json)).id::text as id`;
  await expect(runOp(runJobNow, ctxOf(a), { jobId: orphan!.id })).rejects.toMatchObject({ details: { reason: 'unknown_task' } });
  // the page's warning: the task is not among those the workers handle
  expect((await runOp(jobTasks, ctxOf(a), {})).known).not.toContain('reports:nightly');
  expect(await runOp(cancelJob, ctxOf(a), { jobId: orphan!.id })).toBe(1);

  await runOp(pauseTask, ctxOf(a), { task: allocateJob.task });
  const held = await allocate(a.ws);
  await expect(runOp(runJobNow, ctxOf(a), { jobId: held })).rejects.toMatchObject({ details: { reason: 'task_paused' } });
  expect((await runOp(queuedJobs, ctxOf(a), {})).find((j) => j.id === held)).toMatchObject({ paused: true });
  // held: the failed job queued before the pause and the one queued after
  expect((await runOp(jobTasks, ctxOf(a), {})).paused).toEqual([
    { task: allocateJob.task, pausedBy: `Admin of ${a.ws.slug}`, pausedAt: expect.any(Date), held: 2 },
  ]);
  // B's view: nothing of B is paused
  expect((await runOp(jobTasks, ctxOf(b), {})).paused).toEqual([]);
  await runOp(resumeTask, ctxOf(a), { task: allocateJob.task });
  await expect(runOp(pauseTask, ctxOf(a), { task: crons.mailSchedule.task })).rejects.toMatchObject({ details: { reason: 'not_pausable' } });

  // a worker holds it (a test may write the library's tables; the project never does)
  await db.sql`update graphile_worker._private_jobs set locked_by = 'ops-test-worker', locked_at = now() where id = ${held}::bigint`;
  await expect(runOp(cancelJob, ctxOf(a), { jobId: held })).rejects.toMatchObject({ details: { reason: 'job_running' } });
  await expect(runOp(runJobNow, ctxOf(a), { jobId: held })).rejects.toMatchObject({ details: { reason: 'job_running' } });
  expect((await runOp(workerList, ctxOf(a), {})).find((w) => w.workerIds.includes('ops-test-worker'))).toMatchObject({
    process: null,
    alive: false,
    running: 1,
  });
  await db.sql`select graphile_worker.force_unlock_workers(array['ops-test-worker'])`;

  await expect(runOp(cancelJob, ctxOf(b), { jobId: held })).rejects.toMatchObject({ details: { reason: 'job_gone' } });
  await expect(runOp(runJobNow, ctxOf(b), { jobId: held })).rejects.toMatchObject({ details: { reason: 'job_gone' } });
  expect(await job(held)).toMatchObject({ attempts: 0, priority: 0 });
  await db.sql`select graphile_worker.complete_jobs(${[failed, held]}::bigint[])`;
});

it('a paused task’s jobs are not taken by a real worker, in the pausing workspace only; resuming releases them', async () => {
  const services = {
    sql: db.sql,
    now: () => new Date(),
    log: makeLogger('silent'),
    pdf: null,
    mailer: createMailer({ SMTP_URL: 'smtp://127.0.0.1:1' }),
    mailFrom: 'Billing <billing@agency.test>',
  };
  // queued before the pause, and one due in an hour: both held, each given back its time on resume
  const waitingA = await allocate(a.ws);
  const inAnHour = new Date(Date.now() + 3_600_000);
  const laterA = await allocate(a.ws, inAnHour);
  expect(await runOp(pauseTask, ctxOf(a), { task: allocateJob.task })).toBe(2);
  const worker = await startWorker(db.url, services, { concurrency: 2, pollInterval: 100 });
  try {
    // A's job is queued first, so a worker free to take it would take it before B's
    const heldA = await allocate(a.ws);
    const runsB = await allocate(b.ws);
    await expect.poll(() => attempts(runsB), { timeout: 30_000 }).toBe(1);
    for (const id of [waitingA, heldA, laterA]) {
      expect(await job(id)).toMatchObject({ attempts: 0, locked: false, due: false });
      expect(await attempts(id)).toBe(0);
    }
    // the worker sees itself
    expect((await runOp(workerList, ctxOf(a), {})).some((w) => w.process !== null && w.alive)).toBe(true);

    // resumed while the worker runs: the due ones are taken, the later one keeps its hour
    expect(await runOp(resumeTask, ctxOf(a), { task: allocateJob.task })).toBe(3);
    await expect.poll(() => attempts(heldA), { timeout: 30_000 }).toBe(1);
    await expect.poll(() => attempts(waitingA), { timeout: 30_000 }).toBe(1);
    const [later] = await db.sql<{ runAt: Date }[]>`select run_at as "runAt" from graphile_worker.jobs where id = ${laterA}::bigint`;
    expect(later!.runAt.getTime()).toBe(inAnHour.getTime());
    expect(await db.sql`select 1 from queued_jobs where held_run_at is not null`).toEqual([]);

    // paused again while it runs: held again
    await runOp(pauseTask, ctxOf(a), { task: allocateJob.task });
    const heldAgain = await allocate(a.ws);
    const runsB2 = await allocate(b.ws);
    await expect.poll(() => attempts(runsB2), { timeout: 30_000 }).toBe(1);
    expect(await job(heldAgain)).toMatchObject({ attempts: 0, locked: false });
    await runOp(resumeTask, ctxOf(a), { task: allocateJob.task });
    await expect.poll(() => attempts(heldAgain), { timeout: 30_000 }).toBe(1);
    // the charts' series: every attempt A's jobs made, in each window. An attempt counts once it has
    // finished; its history row is there from its start, which is all the polls above wait for
    await expect
      .poll(
        async () => (await db.sql`select 1 from job_history where job_id = any(${[waitingA, heldA, heldAgain]}::bigint[]) and finished_at is not null`).length,
        {
          timeout: 30_000,
        },
      )
      .toBe(3);
    const series = await runOp(taskSeries, ctxOf(a), {});
    for (const w of ['1h', '1d', '7d'] as const) {
      expect(
        series.filter((p) => p.task === allocateJob.task && p.window === w).reduce((n, p) => n + p.finished, 0),
        w,
      ).toBeGreaterThanOrEqual(3);
    }
  } finally {
    await worker.stop();
  }
}, 90_000);

it('refuses every control to a billing operator (read-only) and to a token, and audits the refusal', async () => {
  const operator = ctxOf(a, { role: 'member', name: 'Rita Readonly', flags: new Set(['billingOperator']) });
  const token = ctxOf(a, { via: 'token', sessionId: null, tokenId: randomUUID(), tokenKind: 'delegated', name: 'Tok Holder' });
  const id = await allocate(a.ws);
  const controls = [
    ['job.cancel', () => runOp(cancelJob, operator, { jobId: id }), () => runOp(cancelJob, token, { jobId: id })],
    ['job.run_now', () => runOp(runJobNow, operator, { jobId: id }), () => runOp(runJobNow, token, { jobId: id })],
    ['task.pause', () => runOp(pauseTask, operator, { task: allocateJob.task }), () => runOp(pauseTask, token, { task: allocateJob.task })],
    ['task.resume', () => runOp(resumeTask, operator, { task: allocateJob.task }), () => runOp(resumeTask, token, { task: allocateJob.task })],
  ] as const;
  for (const [action, asOperator, asToken] of controls) {
    await expect(asOperator(), action).rejects.toMatchObject({ status: 403, details: { reason: 'admin_only' } });
    await expect(asToken(), action).rejects.toMatchObject({ status: 403, details: { reason: 'session_required' } });
    const rows = await db.sql`select actor_name as who, outcome from ops_audit where action = ${action} and outcome = 'refused' order by id`;
    expect(rows, action).toEqual([
      { who: 'Rita Readonly', outcome: 'refused' },
      { who: 'Tok Holder', outcome: 'refused' },
    ]);
  }
  // the operator still reads the controls' pages
  expect((await runOp(queuedJobs, operator, {})).map((j) => j.id)).toContain(id);
  expect(await job(id)).toMatchObject({ attempts: 0, priority: 0 });
});
