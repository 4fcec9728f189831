import { z } from 'zod';
import { HELD_RUN_AT } from '../jobs/paused.ts';
import { defineOp } from '../operation.ts';
import { knownTasks, pausableTasks } from './job-controls.ts';
import { inWorkspace, JOBS } from './jobs.ts';
import { floorHour } from './stats-histogram.ts';

/**
 * What the console's job controls read (issue 26): the jobs not yet run, the tasks with the ones
 * paused, the workers, and each task's attempts over time.
 */

const nothing = z.object({});

export interface QueuedJob {
  id: string;
  task: string;
  queue: string | null;
  key: string | null;
  state: 'waiting' | 'scheduled';
  runAt: Date;
  /** Its task is paused for the workspace: held, no worker takes it until the resume. */
  paused: boolean;
}

/** The first waiting jobs (in the order a worker takes them) and the next scheduled ones the caller's workspace sees. */
export const queuedJobs = defineOp({
  name: 'ops.jobs.queued',
  action: 'ops.read',
  input: nothing,
  output: null,
  run: async ({ sql, principal: p }): Promise<QueuedJob[]> => {
    const rows = await sql<QueuedJob[]>`
      select * from (
        (select j.id::text, j.task_identifier as task, j.queue_name as queue, j.key, 'waiting' as state, j.run_at as "runAt",
                exists (select 1 from paused_tasks t where t.workspace_id = qj.workspace_id and t.task = j.task_identifier) as paused
         from ${JOBS(sql)}
         where j.locked_at is null and j.last_error is null and j.run_at <= now() and ${inWorkspace(sql, p.workspaceId)}
         order by j.priority, j.run_at, j.id limit 50)
        union all
        (select j.id::text, j.task_identifier, j.queue_name, j.key, 'scheduled', j.run_at,
                exists (select 1 from paused_tasks t where t.workspace_id = qj.workspace_id and t.task = j.task_identifier)
         from ${JOBS(sql)}
         where j.locked_at is null and j.last_error is null and j.run_at > now() and ${inWorkspace(sql, p.workspaceId)}
         order by j.run_at, j.id limit 50)) q`;
    return [...rows];
  },
});

export interface TaskCatalog {
  /** Every task a worker handles (the catalog): a job of any other task waits for ever. */
  known: string[];
  /** The tasks an operator may pause. */
  pausable: string[];
  /** With how many of the workspace's jobs each holds. */
  paused: { task: string; pausedBy: string; pausedAt: Date; held: number }[];
}

/** The tasks the workers handle, and those paused for the caller's workspace (who paused them, when). */
export const jobTasks = defineOp({
  name: 'ops.jobs.tasks',
  action: 'ops.read',
  input: nothing,
  output: null,
  run: async ({ sql, principal: p }): Promise<TaskCatalog> => {
    const paused = await sql<TaskCatalog['paused']>`
      select t.task, t.paused_by_name as "pausedBy", t.paused_at as "pausedAt",
             (select count(*)::int from queued_jobs qj join graphile_worker.jobs j on j.id = qj.job_id
              where qj.workspace_id = t.workspace_id and qj.task = t.task and j.run_at = ${HELD_RUN_AT}::timestamptz) as held
      from paused_tasks t where t.workspace_id = ${p.workspaceId} order by t.task`;
    return { known: knownTasks(), pausable: pausableTasks(), paused: [...paused] };
  },
});

export interface WorkerRow {
  /** The worker process (its heartbeat), or null for a lock holder no heartbeat names (a dead worker). */
  process: string | null;
  workerIds: string[];
  startedAt: Date | null;
  beatAt: Date | null;
  alive: boolean;
  /** The caller's jobs (and the process's) it holds now. */
  running: number;
}

/**
 * The workers: each process's heartbeat (src/jobs/liveness.ts) with the jobs it holds now, and the
 * lock holders no heartbeat names (graphile-worker's `locked_by`), whose jobs wait for the sweep or
 * a force-unlock. Only jobs the caller's workspace may see are counted.
 */
export const workerList = defineOp({
  name: 'ops.jobs.workers',
  action: 'ops.read',
  input: nothing,
  output: null,
  run: async ({ sql, principal: p }): Promise<WorkerRow[]> => {
    const rows = await sql<WorkerRow[]>`
      with held as (
        select j.locked_by, count(*)::int as n from ${JOBS(sql)}
        where j.locked_by is not null and ${inWorkspace(sql, p.workspaceId)} group by 1)
      select b.process_id as process, b.worker_ids as "workerIds", b.started_at as "startedAt", b.beat_at as "beatAt",
             b.beat_at > now() - interval '1 minute' as alive,
             coalesce((select sum(h.n) from held h where h.locked_by = any(b.worker_ids)), 0)::int as running
      from worker_heartbeats b
      union all
      select null, array[h.locked_by], null, null, false, h.n from held h
      where not exists (select 1 from worker_heartbeats b where h.locked_by = any(b.worker_ids))
      order by 1 nulls last, 2`;
    return [...rows];
  },
});

/** The charts' windows: the span shown and the width of one bar. */
export const SERIES = {
  '1h': { span: 3_600_000, step: 300_000 },
  '1d': { span: 86_400_000, step: 3_600_000 },
  '7d': { span: 7 * 86_400_000, step: 6 * 3_600_000 },
} as const;
export type SeriesWindow = keyof typeof SERIES;

export interface SeriesPoint {
  task: string;
  window: SeriesWindow;
  /** The start of the bar (a multiple of its step since the epoch, UTC). */
  at: Date;
  finished: number;
  failed: number;
}

/**
 * Per task, attempts finished and failed in bars of 5 minutes over the last hour, hours over the last
 * day, 6 hours over 7 days. Whole hours come from the hourly counters (sql/094, job_stats_hourly; a
 * bar of an hour or 6 hours is made of whole UTC hours), job_history is read only for the partial
 * hours at a window's ends (the hour it starts in, and the last hour): the cost does not grow with
 * the attempts of the last 7 days (issue 25). Counts are exact.
 */
export const taskSeries = defineOp({
  name: 'ops.jobs.series',
  action: 'ops.read',
  input: nothing,
  output: null,
  run: async (ctx): Promise<SeriesPoint[]> => {
    const { sql, principal: p } = ctx;
    const now = ctx.now().getTime();
    const current = floorHour(now);
    const windows = Object.entries(SERIES).map(([name, w]) => ({
      name,
      span: `${w.span / 1000} seconds`,
      step: `${w.step / 1000} seconds`,
      head: new Date(floorHour(now - w.span)).toISOString(),
    }));
    const head = (name: SeriesWindow) => new Date(floorHour(now - SERIES[name].span));
    const rows = await sql<SeriesPoint[]>`
      with w as (select * from jsonb_to_recordset(${JSON.stringify(windows)}::text::jsonb) as x(name text, span interval, step interval, head timestamptz)),
      src as (
        select s.task, s.hour as at, true as whole, s.finished, s.failed from job_stats_hourly s
        where s.workspace_id in (${p.workspaceId}::uuid, '00000000-0000-0000-0000-000000000000'::uuid)
          and s.hour > ${head('7d')}::timestamptz and s.hour < ${new Date(current)}::timestamptz and s.finished > 0
        union all
        select h.task, h.started_at, false, 1, (h.outcome = 'failed')::int from job_history h
        where h.finished_at is not null and (h.workspace_id = ${p.workspaceId}::uuid or h.workspace_id is null)
          and (h.started_at > ${new Date(now - SERIES['1h'].span)}::timestamptz
               or (h.started_at > ${new Date(now - SERIES['1d'].span)}::timestamptz and h.started_at < ${new Date(head('1d').getTime() + 3_600_000)}::timestamptz)
               or (h.started_at > ${new Date(now - SERIES['7d'].span)}::timestamptz and h.started_at < ${new Date(head('7d').getTime() + 3_600_000)}::timestamptz)))
      select src.task, w.name as window, date_bin(w.step, src.at, timestamptz '1970-01-01 00:00:00+00') as at,
             sum(src.finished)::int as finished, sum(src.failed)::int as failed
      from src join w on case when src.whole then src.at > w.head
                              else src.at > ${new Date(now)}::timestamptz - w.span
                                   and (date_trunc('hour', src.at, 'UTC') = w.head or src.at >= ${new Date(current)}::timestamptz) end
      group by 1, 2, 3 order by 1, 2, 3`;
    return [...rows];
  },
});
