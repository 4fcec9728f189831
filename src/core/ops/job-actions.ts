import { z } from 'zod';
import { tx, type Ctx } from '../ctx.ts';
import { conflict } from '../errors.ts';
import { cronNamed } from '../jobs/catalog.ts';
import { defineOp } from '../operation.ts';
import { inWorkspace, JOBS } from './job-live.ts';
import { failedFilter, failedWhere, type FailedFilter } from './jobs.ts';

const jobIdInput = z.object({
  jobId: z
    .string()
    .regex(/^\d{1,18}$/)
    .describe('The job (graphile-worker id).'),
});
const describeFilter = (f: Partial<Record<keyof FailedFilter, unknown>>) =>
  Object.entries(f)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ') || 'all failed jobs';

/**
 * Retries failed jobs now: due at once, with one more attempt allowed when they had used theirs
 * up. Their attempts count on (graphile-worker's `attempts` is not reset), so the next attempt
 * leaves a new job_history row following the failed one (job_history_follows) and nothing is
 * overwritten. Through graphile-worker's public `reschedule_jobs`, which touches only jobs no
 * worker holds when it runs: one that started meanwhile is left to its worker.
 */
async function retryWhere(ctx: Ctx, f: FailedFilter, ids: string[] | null): Promise<number> {
  return tx(ctx, async ({ sql, principal: p }) => {
    const rows = await sql`
      select r.id from (
        select greatest(j.max_attempts, j.attempts + 1) as max_attempts, array_agg(j.id) as ids
        from ${JOBS(sql)} where ${failedWhere(sql, p.workspaceId, f)} ${ids ? sql`and j.id = any(${ids}::bigint[])` : sql``}
        group by 1) g
      cross join lateral graphile_worker.reschedule_jobs(g.ids, run_at => now(), max_attempts => g.max_attempts) r`;
    if (rows.length > 0) await sql`select pg_notify('jobs:insert', ${JSON.stringify({ count: rows.length })})`;
    return rows.length;
  });
}

/** Cancels failed jobs: graphile-worker's complete_jobs deletes them (their history stays in job_history). */
async function cancelWhere(ctx: Ctx, f: FailedFilter, ids: string[] | null): Promise<number> {
  return tx(ctx, async ({ sql, principal: p }) => {
    const chosen = await sql<{ id: string }[]>`
      select j.id::text from ${JOBS(sql)} where ${failedWhere(sql, p.workspaceId, f)} ${ids ? sql`and j.id = any(${ids}::bigint[])` : sql``}`;
    if (chosen.length === 0) return 0;
    const done = await sql<{ id: string }[]>`select id::text from graphile_worker.complete_jobs(${chosen.map((c) => c.id)}::bigint[])`;
    await sql`delete from queued_jobs where job_id = any(${done.map((d) => d.id)}::bigint[])`;
    return done.length;
  });
}

/** Retry one failed job. (Cancel, of any job not running, is src/core/ops/job-controls.ts.) */
export const retryJob = defineOp({
  name: 'ops.job.retry',
  action: 'ops.act',
  input: jobIdInput,
  output: null,
  audit: { action: 'job.retry', target: (s) => `job ${String(s.jobId)}`, detail: () => null },
  run: async (ctx, { jobId }): Promise<number> => {
    const n = await retryWhere(ctx, {}, [jobId]);
    if (n === 0) throw conflict('job_not_failed', undefined, 'The job is not a failed job any more (it ran, is running, or is gone).');
    return n;
  },
});

export const bulkInput = failedFilter.extend({ action: z.enum(['retry', 'cancel']).describe('Retry them now, or cancel them.') });

/** Retry or cancel every failed job a filter selects; answers how many it touched. */
export const actOnFailed = defineOp({
  name: 'ops.jobs.bulk',
  action: 'ops.act',
  input: bulkInput,
  output: null,
  audit: {
    action: (s) => `jobs.bulk_${s.action === 'cancel' ? 'cancel' : 'retry'}`,
    target: ({ action: _, ...f }) => describeFilter(f),
    detail: (_, n: number) => `${n} job(s)`,
  },
  run: (ctx, { action, ...f }): Promise<number> => (action === 'retry' ? retryWhere(ctx, f, null) : cancelWhere(ctx, f, null)),
});

const unlockInput = z.object({ workerId: z.string().min(1).max(200).describe('The lock holder (graphile-worker pool id).') });

/** Frees the jobs a dead worker holds (graphile-worker's force_unlock_workers); refused while the worker still beats. */
export const forceUnlock = defineOp({
  name: 'ops.worker.force_unlock',
  action: 'ops.act',
  input: unlockInput,
  output: null,
  audit: { action: 'worker.force_unlock', target: (s) => `worker ${String(s.workerId)}` },
  run: async ({ sql, principal: p }, { workerId }): Promise<void> => {
    const [alive] = await sql`select 1 from worker_heartbeats where ${workerId} = any(worker_ids) and beat_at > now() - interval '1 minute'`;
    if (alive) throw conflict('worker_alive', undefined, 'That worker is alive; its jobs are running.');
    const [mine] = await sql`select 1 from ${JOBS(sql)} where j.locked_by = ${workerId} and ${inWorkspace(sql, p.workspaceId)} limit 1`;
    if (!mine) throw conflict('no_locked_jobs', undefined, 'That worker holds none of your jobs.');
    await sql`select graphile_worker.force_unlock_workers(${[workerId]}::text[])`;
  },
});

const runNowInput = z.object({ task: z.string().min(1).max(200).describe('A task of the crontab.') });

/** "Run now" for a crontab task (one declared in src/core/jobs/catalog.ts): one job queued at once, as the crontab would queue it. */
export const runCronNow = defineOp({
  name: 'ops.cron.run_now',
  action: 'ops.act',
  input: runNowInput,
  output: null,
  audit: { action: 'cron.run_now', target: (s) => `task ${String(s.task)}` },
  run: async (ctx, { task }): Promise<void> => {
    const cron = cronNamed(task);
    if (!cron) throw conflict('not_a_cron_task', undefined, 'That task is not on the crontab.');
    await ctx.sql`select graphile_worker.add_job(${cron.task}, '{}'::json)`;
  },
});
