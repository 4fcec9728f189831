import { z } from 'zod';
import type { Db } from '../../db/connect.ts';
import type { Ctx } from '../ctx.ts';
import { defineOp } from '../operation.ts';
import { inWorkspace, JOBS, liveQueue, type QueueCount, type RunningJob } from './job-live.ts';

const nothing = z.object({});

/** Waiting, scheduled, running and failed counts per task and queue, with the oldest waiting job's due time. */
export const queueCounts = defineOp({
  name: 'ops.jobs.counts',
  action: 'ops.read',
  input: nothing,
  output: null,
  run: async (ctx): Promise<QueueCount[]> => (await liveQueue(ctx)).counts,
});

/** Jobs a worker holds, oldest lock first, with whether that worker is still beating. */
export const runningJobs = defineOp({
  name: 'ops.jobs.running',
  action: 'ops.read',
  input: nothing,
  output: null,
  run: async (ctx): Promise<RunningJob[]> => (await liveQueue(ctx)).running,
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
  return sql`j.locked_at is null and j.last_error is not null and ${inWorkspace(sql, workspaceId)} ${narrowedBy(sql, f)}`;
}

/** The filter's own conditions over failed jobs `j` (`group`: their error group, computed or already at hand). */
const narrowedBy = (sql: Db, f: FailedFilter, group = errorGroup(sql)) =>
  sql`${f.task ? sql`and j.task_identifier = ${f.task}` : sql``}
    ${f.queue ? sql`and j.queue_name = ${f.queue}` : sql``}
    ${f.error !== undefined ? sql`and ${group} = ${f.error}` : sql``}
    ${f.before ? sql`and j.updated_at < ${f.before}::date` : sql``}`;

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

type FailedGroup = { error: string; task: string; count: number };
const at = (s: string | null): Date | null => (s === null ? null : new Date(s));

/**
 * Failed jobs grouped by error message, and the first page of those the filter selects, with how
 * many it selects. One statement: the workspace's failed jobs are read from graphile-worker's view
 * once and the error group computed once per distinct message (issue 25: three statements read the
 * view each and computed the group 300 times for 200 jobs). JSON carries the three answers in one row.
 */
export const failedJobs = defineOp({
  name: 'ops.jobs.failed',
  action: 'ops.read',
  input: failedFilter,
  output: null,
  run: async ({ sql, principal: p }, f): Promise<{ groups: FailedGroup[]; jobs: FailedJob[]; total: number }> => {
    const [row] = await sql<
      { groups: FailedGroup[]; jobs: (Omit<FailedJob, 'nextRun' | 'failedAt'> & { nextRun: string | null; failedAt: string })[]; total: number }[]
    >`
      with f as materialized (
        select j.id, j.task_identifier, j.queue_name, j.key, j.attempts, j.max_attempts, j.last_error, j.run_at, j.updated_at
        from ${JOBS(sql)} where ${failedWhere(sql, p.workspaceId, {})}),
      -- the group once per distinct message (jobs failing alike share theirs), not once per job
      j as (
        select f.*, g.error_group from f
        join (select j.last_error, ${errorGroup(sql)} as error_group from (select distinct f.last_error from f) j) g on g.last_error = f.last_error),
      picked as (select * from j where true ${narrowedBy(sql, f, sql`j.error_group`)})
      select
        (select coalesce(json_agg(json_build_object('error', g.error, 'task', g.task, 'count', g.count) order by g.count desc, g.error), '[]')
         from (select j.error_group as error, min(j.task_identifier) as task, count(*)::int as count from j group by 1 order by 3 desc, 1 limit 50) g) as groups,
        (select coalesce(json_agg(json_build_object('id', l.id::text, 'task', l.task_identifier, 'queue', l.queue_name, 'key', l.key, 'attempts', l.attempts,
                                                    'maxAttempts', l.max_attempts, 'lastError', l.last_error, 'errorGroup', l.error_group,
                                                    'nextRun', case when l.attempts < l.max_attempts then l.run_at end, 'failedAt', l.updated_at)
                                  order by l.updated_at desc, l.id desc), '[]')
         from (select * from picked order by updated_at desc, id desc limit 100) l) as jobs,
        (select count(*)::int from picked) as total`;
    const { groups, jobs, total } = row!;
    return { groups, jobs: jobs.map((j) => ({ ...j, nextRun: at(j.nextRun), failedAt: at(j.failedAt)! })), total };
  },
});

async function countWhere({ sql, principal }: Ctx, f: FailedFilter): Promise<number> {
  const [r] = await sql<{ n: number }[]>`select count(*)::int as n from ${JOBS(sql)} where ${failedWhere(sql, principal.workspaceId, f)}`;
  return r!.n;
}

/** How many failed jobs a filter selects: what a bulk action shows before it runs. */
export const countFailed = defineOp({ name: 'ops.jobs.count_failed', action: 'ops.read', input: failedFilter, output: null, run: countWhere });
