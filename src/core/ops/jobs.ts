import { z } from 'zod';
import type { Db } from '../../db/connect.ts';
import type { Ctx } from '../ctx.ts';
import { defineOp } from '../operation.ts';

/**
 * The console's view of the queue, scoped to the caller's workspace: graphile-worker's public
 * `jobs` view beside the project's own `queued_jobs` (the workspace and payload each job was
 * queued with, sql/076). A job with no workspace there (a cleanup, the mailbox scheduler, queued
 * by the crontab) is the process's, shown to every operator. A job is in exactly one state:
 * running (locked), failed (not running, has an error: waiting for its retry or given up),
 * scheduled (no error, not due) or waiting (no error, due).
 */
export const JOBS = (sql: Db) => sql`graphile_worker.jobs j left join queued_jobs qj on qj.job_id = j.id`;

/** The jobs the caller's workspace may see (and act on): its own and the process's (no workspace). */
export const inWorkspace = (sql: Db, workspaceId: string) => sql`(qj.workspace_id is null or qj.workspace_id = ${workspaceId}::uuid)`;

export interface QueueCount {
  task: string;
  queue: string | null;
  waiting: number;
  scheduled: number;
  running: number;
  failed: number;
  oldestWaiting: Date | null;
}

const nothing = z.object({});

/** Waiting, scheduled, running and failed counts per task and queue, with the oldest waiting job's due time. */
export const queueCounts = defineOp({
  name: 'ops.jobs.counts',
  action: 'ops.read',
  input: nothing,
  output: null,
  run: ({ sql, principal }): Promise<QueueCount[]> => sql<QueueCount[]>`
    select j.task_identifier as task, j.queue_name as queue,
           count(*) filter (where j.locked_at is null and j.last_error is null and j.run_at <= now())::int as waiting,
           count(*) filter (where j.locked_at is null and j.last_error is null and j.run_at > now())::int as scheduled,
           count(*) filter (where j.locked_at is not null)::int as running,
           count(*) filter (where j.locked_at is null and j.last_error is not null)::int as failed,
           min(j.run_at) filter (where j.locked_at is null and j.last_error is null and j.run_at <= now()) as "oldestWaiting"
    from ${JOBS(sql)}
    where ${inWorkspace(sql, principal.workspaceId)}
    group by j.task_identifier, j.queue_name
    order by j.task_identifier, j.queue_name nulls first`,
});

export interface RunningJob {
  id: string;
  task: string;
  key: string | null;
  lockedBy: string | null;
  lockedAt: Date;
  attempts: number;
  /** Whether a fresh worker heartbeat names the lock's holder (worker_heartbeats): false means a dead worker. */
  workerAlive: boolean;
}

/** Jobs a worker holds, oldest lock first, with whether that worker is still beating. */
export const runningJobs = defineOp({
  name: 'ops.jobs.running',
  action: 'ops.read',
  input: nothing,
  output: null,
  run: ({ sql, principal }): Promise<RunningJob[]> => sql<RunningJob[]>`
    select j.id::text, j.task_identifier as task, j.key, j.locked_by as "lockedBy", j.locked_at as "lockedAt", j.attempts,
           exists (select 1 from worker_heartbeats b where j.locked_by = any(b.worker_ids) and b.beat_at > now() - interval '1 minute') as "workerAlive"
    from ${JOBS(sql)}
    where j.locked_at is not null and ${inWorkspace(sql, principal.workspaceId)}
    order by j.locked_at limit 200`,
});

/**
 * Which failed jobs a list or a bulk action is about. `error` is an error group (the normalised
 * message, `errorGroup`). A form's blank fields are the console's to drop (src/ops), not this filter's.
 */
export const failedFilter = z.object({
  task: z.string().trim().max(200).optional().describe('Only jobs of this task.'),
  queue: z.string().trim().max(200).optional().describe('Only jobs of this queue.'),
  error: z.string().max(300).optional().describe('Only jobs of this error group.'),
  before: z.iso.date().optional().describe('Only jobs whose last failure was before this day (UTC).'),
});
export type FailedFilter = z.infer<typeof failedFilter>;

/** A failed job's error group: its message normalised (sql/095 job_error_group: ids and numbers out, a zod error by its issues). */
export const errorGroup = (sql: Db) => sql`job_error_group(j.last_error)`;

/** The failed jobs a filter selects (the same condition lists, counts and acts on). */
export function failedWhere(sql: Db, workspaceId: string, f: FailedFilter) {
  return sql`j.locked_at is null and j.last_error is not null and ${inWorkspace(sql, workspaceId)}
    ${f.task ? sql`and j.task_identifier = ${f.task}` : sql``}
    ${f.queue ? sql`and j.queue_name = ${f.queue}` : sql``}
    ${f.error !== undefined ? sql`and ${errorGroup(sql)} = ${f.error}` : sql``}
    ${f.before ? sql`and j.updated_at < ${f.before}::date` : sql``}`;
}

export interface FailedJob {
  id: string;
  task: string;
  queue: string | null;
  key: string | null;
  attempts: number;
  maxAttempts: number;
  lastError: string;
  /** Its error group (`errorGroup`): what the list shows, one line whatever the message. */
  errorGroup: string;
  /** When it runs again; null when it gave up (attempts used up). */
  nextRun: Date | null;
  failedAt: Date;
}

/** Failed jobs grouped by error message, and the first page of those the filter selects. */
export const failedJobs = defineOp({
  name: 'ops.jobs.failed',
  action: 'ops.read',
  input: failedFilter,
  output: null,
  run: async (ctx, f): Promise<{ groups: { error: string; task: string; count: number }[]; jobs: FailedJob[]; total: number }> => {
    const { sql, principal: p } = ctx;
    const groups = await sql<{ error: string; task: string; count: number }[]>`
    select ${errorGroup(sql)} as error, min(j.task_identifier) as task, count(*)::int as count
    from ${JOBS(sql)} where ${failedWhere(sql, p.workspaceId, {})}
    group by 1 order by 3 desc, 1 limit 50`;
    const jobs = await sql<FailedJob[]>`
    select j.id::text, j.task_identifier as task, j.queue_name as queue, j.key, j.attempts, j.max_attempts as "maxAttempts",
           j.last_error as "lastError", ${errorGroup(sql)} as "errorGroup", case when j.attempts < j.max_attempts then j.run_at end as "nextRun", j.updated_at as "failedAt"
    from ${JOBS(sql)} where ${failedWhere(sql, p.workspaceId, f)}
    order by j.updated_at desc, j.id desc limit 100`;
    return { groups: [...groups], jobs: [...jobs], total: await countWhere(ctx, f) };
  },
});

async function countWhere({ sql, principal }: Ctx, f: FailedFilter): Promise<number> {
  const [r] = await sql<{ n: number }[]>`select count(*)::int as n from ${JOBS(sql)} where ${failedWhere(sql, principal.workspaceId, f)}`;
  return r!.n;
}

/** How many failed jobs a filter selects: what a bulk action shows before it runs. */
export const countFailed = defineOp({ name: 'ops.jobs.count_failed', action: 'ops.read', input: failedFilter, output: null, run: countWhere });
