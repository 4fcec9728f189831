import { z } from 'zod';
import { authorize } from '../access/authorize.ts';
import { tx, type Ctx } from '../ctx.ts';
import { conflict } from '../errors.ts';
import { cronNamed } from '../jobs/catalog.ts';
import { parseInput } from '../validation.ts';
import { audited } from './audit.ts';
import { failedWhere, inWorkspace, JOBS, parseFailedFilter, type FailedFilter } from './jobs.ts';

const jobIdInput = z.object({
  jobId: z
    .string()
    .regex(/^\d{1,18}$/)
    .describe('The job (graphile-worker id).'),
});
const describeFilter = (f: FailedFilter) =>
  Object.entries(f)
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

/** Retry or cancel one failed job. */
export async function actOnJob(ctx: Ctx, action: 'retry' | 'cancel', raw: unknown): Promise<number> {
  const { jobId } = parseInput(jobIdInput, raw);
  return audited(
    ctx,
    `job.${action}`,
    `job ${jobId}`,
    async () => {
      authorize(ctx, 'ops.act');
      const n = action === 'retry' ? await retryWhere(ctx, {}, [jobId]) : await cancelWhere(ctx, {}, [jobId]);
      if (n === 0) throw conflict('job_not_failed', undefined, 'The job is not a failed job any more (it ran, is running, or is gone).');
      return n;
    },
    () => null,
  );
}

/** Retry or cancel every failed job a filter selects; answers how many it touched. */
export async function actOnFailed(ctx: Ctx, action: 'retry' | 'cancel', raw: unknown): Promise<number> {
  const f = parseFailedFilter(raw);
  return audited(
    ctx,
    `jobs.bulk_${action}`,
    describeFilter(f),
    async () => {
      authorize(ctx, 'ops.act');
      return action === 'retry' ? retryWhere(ctx, f, null) : cancelWhere(ctx, f, null);
    },
    (n) => `${n} job(s)`,
  );
}

const unlockInput = z.object({ workerId: z.string().min(1).max(200).describe('The lock holder (graphile-worker pool id).') });

/** Frees the jobs a dead worker holds (graphile-worker's force_unlock_workers); refused while the worker still beats. */
export async function forceUnlock(ctx: Ctx, raw: unknown): Promise<void> {
  const { workerId } = parseInput(unlockInput, raw);
  await audited(ctx, 'worker.force_unlock', `worker ${workerId}`, async () => {
    authorize(ctx, 'ops.act');
    const { sql, principal: p } = ctx;
    const [alive] = await sql`select 1 from worker_heartbeats where ${workerId} = any(worker_ids) and beat_at > now() - interval '1 minute'`;
    if (alive) throw conflict('worker_alive', undefined, 'That worker is alive; its jobs are running.');
    const [mine] = await sql`select 1 from ${JOBS(sql)} where j.locked_by = ${workerId} and ${inWorkspace(sql, p.workspaceId)} limit 1`;
    if (!mine) throw conflict('no_locked_jobs', undefined, 'That worker holds none of your jobs.');
    await sql`select graphile_worker.force_unlock_workers(${[workerId]}::text[])`;
  });
}

const runNowInput = z.object({ task: z.string().min(1).max(200).describe('A task of the crontab.') });

/** "Run now" for a crontab task (one declared in src/core/jobs/catalog.ts): one job queued at once, as the crontab would queue it. */
export async function runCronNow(ctx: Ctx, raw: unknown): Promise<void> {
  const { task } = parseInput(runNowInput, raw);
  await audited(ctx, 'cron.run_now', `task ${task}`, async () => {
    authorize(ctx, 'ops.act');
    const cron = cronNamed(task);
    if (!cron) throw conflict('not_a_cron_task', undefined, 'That task is not on the crontab.');
    await ctx.sql`select graphile_worker.add_job(${cron.task}, '{}'::json)`;
  });
}
