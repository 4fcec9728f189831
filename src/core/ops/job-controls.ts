import { z } from 'zod';
import type { Ctx } from '../ctx.ts';
import { conflict } from '../errors.ts';
import { crons, jobs } from '../jobs/catalog.ts';
import { HELD_RUN_AT } from '../jobs/paused.ts';
import { defineOp } from '../operation.ts';
import { inWorkspace, JOBS } from './job-live.ts';

/**
 * The console's controls over jobs that have not run yet (issue 26): cancel and "run now" of a
 * waiting, scheduled or failed job, and pausing a task. Every change goes through graphile-worker's
 * public SQL functions (`complete_jobs`, `reschedule_jobs`) on jobs the caller's workspace may see
 * (its own and the process's); the library touches only jobs no worker holds when they run.
 */

const jobIdInput = z.object({
  jobId: z
    .string()
    .regex(/^\d{1,18}$/)
    .describe('The job (graphile-worker id).'),
});

/** Every task a worker handles: the catalog's jobs and crontab tasks (src/core/jobs/catalog.ts). */
export const knownTasks = (): string[] => [...Object.values(jobs), ...Object.values(crons)].map((d) => d.task);
/** The tasks an operator may pause: the catalog's jobs (the crontab's are the process's, no workspace's). */
export const pausableTasks = (): string[] => Object.values(jobs).map((j) => j.task);

interface Target {
  id: string;
  task: string;
  payload: unknown;
  running: boolean;
  failed: boolean;
  paused: boolean;
}

/** The job as the caller's workspace sees it, or the conflict saying it is gone. */
async function target(ctx: Ctx, jobId: string): Promise<Target> {
  const { sql, principal: p } = ctx;
  const [job] = await sql<Target[]>`
    select j.id::text, j.task_identifier as task, qj.payload, j.locked_at is not null as running, j.last_error is not null as failed,
           exists (select 1 from paused_tasks t where t.workspace_id = qj.workspace_id and t.task = j.task_identifier) as paused
    from ${JOBS(sql)} where j.id = ${jobId}::bigint and ${inWorkspace(sql, p.workspaceId)}`;
  if (!job) throw conflict('job_gone', undefined, 'The job is no longer queued (it finished or was cancelled).');
  if (job.running) throw conflict('job_running', undefined, 'A worker is running the job now.');
  return job;
}

/**
 * Cancels a job no worker holds (waiting, scheduled or failed) with graphile-worker's
 * `complete_jobs`: it leaves the queue, its history stays in job_history. The console asks the
 * operator to type CANCEL first (src/ops/pages/job-controls.ts).
 */
export const cancelJob = defineOp({
  name: 'ops.job.cancel',
  action: 'ops.act',
  input: jobIdInput,
  output: null,
  tx: true,
  audit: { action: 'job.cancel', target: (s) => `job ${String(s.jobId)}`, detail: () => null },
  run: async (ctx, { jobId }): Promise<number> => {
    const job = await target(ctx, jobId);
    const done = await ctx.sql`select id from graphile_worker.complete_jobs(${[job.id]}::bigint[])`;
    // a worker took it between the look and the cancel: the library left it alone
    if (done.length === 0) throw conflict('job_running', undefined, 'A worker is running the job now.');
    await ctx.sql`delete from queued_jobs where job_id = ${job.id}::bigint`;
    // what the job served is settled as if its last attempt had failed: a run fails (it can then be
    // started again), a delivery stops, rather than waiting for a job that will never come
    const decl = Object.values(jobs).find((j) => j.task === job.task);
    const payload = decl?.payload.safeParse(job.payload);
    if (decl?.onCancelled && payload?.success) await decl.onCancelled(ctx.sql, payload.data as never, 'An operator cancelled the job.', ctx.now());
    return done.length;
  },
});

/**
 * "Run now" of a waiting or scheduled job: due at once and ahead of the jobs of the default
 * priority (graphile-worker takes the lowest priority, then the earliest run_at), through
 * `reschedule_jobs`. A failed job is retried instead (its attempts), a paused task's job waits for
 * the resume, and a job of a task no worker handles cannot run at all.
 */
export const runJobNow = defineOp({
  name: 'ops.job.run_now',
  action: 'ops.act',
  input: jobIdInput,
  output: null,
  tx: true,
  audit: { action: 'job.run_now', target: (s) => `job ${String(s.jobId)}` },
  run: async (ctx, { jobId }): Promise<void> => {
    const job = await target(ctx, jobId);
    if (job.failed) throw conflict('job_failed', undefined, 'The job failed: retry it instead.');
    if (!knownTasks().includes(job.task)) throw conflict('unknown_task', undefined, `No worker handles ${job.task}: the job cannot run.`);
    if (job.paused) throw conflict('task_paused', undefined, `${job.task} is paused: resume it first.`);
    const [moved] = await ctx.sql`
      select r.id from graphile_worker.jobs j
      cross join lateral graphile_worker.reschedule_jobs(array[j.id], run_at => now(), priority => least(j.priority, -1)) r
      where j.id = ${job.id}::bigint`;
    if (!moved) throw conflict('job_running', undefined, 'A worker is running the job now.');
    // wake the workers now rather than at their next poll (graphile-worker's own channel)
    await ctx.sql`select pg_notify('jobs:insert', '{"count":1}')`;
  },
});

const taskInput = z.object({ task: z.string().trim().min(1).max(200).describe('A task of the job catalog (src/core/jobs/catalog.ts).') });

/**
 * Pauses a task for the caller's workspace: its jobs no worker holds are rescheduled to a moment
 * that never comes (graphile-worker's `reschedule_jobs`), the time each was due kept for the
 * resume; jobs queued meanwhile are added held (src/core/jobs/paused.ts). A job running now
 * finishes its attempt. Pausing a paused task changes nothing.
 */
export const pauseTask = defineOp({
  name: 'ops.task.pause',
  action: 'ops.act',
  input: taskInput,
  output: null,
  tx: true,
  audit: { action: 'task.pause', target: (s) => `task ${String(s.task)}`, detail: (_, n: number) => `${n} job(s) held` },
  run: async ({ sql, principal: p }, { task }): Promise<number> => {
    if (!pausableTasks().includes(task)) {
      throw conflict('not_pausable', undefined, `${task} cannot be paused: only the tasks of queued jobs can (${pausableTasks().join(', ')}).`);
    }
    await sql`
      insert into paused_tasks (workspace_id, task, paused_by, paused_by_name) values (${p.workspaceId}, ${task}, ${p.identityId}, ${p.name})
      on conflict do nothing`;
    const due = await sql<{ id: string }[]>`
      update queued_jobs qj set held_run_at = j.run_at
      from graphile_worker.jobs j
      where j.id = qj.job_id and qj.workspace_id = ${p.workspaceId} and j.task_identifier = ${task}
        and j.locked_at is null and j.run_at <> ${HELD_RUN_AT}::timestamptz
      returning qj.job_id::text as id`;
    if (due.length === 0) return 0;
    const held = await sql<{ id: string }[]>`
      select id::text from graphile_worker.reschedule_jobs(${due.map((d) => d.id)}::bigint[], run_at => ${HELD_RUN_AT}::timestamptz)`;
    // a worker took one between the two statements: it runs, and has no due time to give back
    const taken = due.filter((d) => !held.some((h) => h.id === d.id)).map((d) => d.id);
    if (taken.length) await sql`update queued_jobs set held_run_at = null where job_id = any(${taken}::bigint[])`;
    return held.length;
  },
});

/** Resumes a paused task: each held job is due again when it was before the pause (the late ones at once). Resuming a running task changes nothing. */
export const resumeTask = defineOp({
  name: 'ops.task.resume',
  action: 'ops.act',
  input: taskInput,
  output: null,
  tx: true,
  audit: { action: 'task.resume', target: (s) => `task ${String(s.task)}`, detail: (_, n: number) => `${n} job(s) released` },
  run: async ({ sql, principal: p }, { task }): Promise<number> => {
    await sql`delete from paused_tasks where workspace_id = ${p.workspaceId} and task = ${task}`;
    const released = await sql`
      select r.id from graphile_worker.jobs j
      join queued_jobs qj on qj.job_id = j.id
      cross join lateral graphile_worker.reschedule_jobs(array[j.id], run_at => coalesce(qj.held_run_at, now())) r
      where qj.workspace_id = ${p.workspaceId} and j.task_identifier = ${task} and j.run_at = ${HELD_RUN_AT}::timestamptz`;
    await sql`update queued_jobs set held_run_at = null where workspace_id = ${p.workspaceId} and task = ${task} and held_run_at is not null`;
    // wake the workers now rather than at their next poll (graphile-worker's own channel)
    if (released.length) await sql`select pg_notify('jobs:insert', ${JSON.stringify({ count: released.length })})`;
    return released.length;
  },
});
