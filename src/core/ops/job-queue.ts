import { z } from 'zod';
import { HELD_RUN_AT } from '../jobs/paused.ts';
import { defineOp } from '../operation.ts';
import { knownTasks, pausableTasks } from './job-controls.ts';
import { liveQueue, type QueuedJob, type WorkerRow } from './job-live.ts';
import { floorHour } from './stats-histogram.ts';
import { wholeHours } from './stats.ts';

/**
 * What the console's job controls read (issue 26): the jobs not yet run, the tasks with the ones
 * paused, the workers, and each task's attempts over time.
 */

const nothing = z.object({});

/** The first waiting jobs (in the order a worker takes them) and the next scheduled ones the caller's workspace sees. */
export const queuedJobs = defineOp({
  name: 'ops.jobs.queued',
  action: 'ops.read',
  input: nothing,
  output: null,
  run: async (ctx): Promise<QueuedJob[]> => (await liveQueue(ctx)).queued,
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
  run: async (ctx): Promise<WorkerRow[]> => (await liveQueue(ctx)).workers,
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
 * day, 6 hours over 7 days. Whole hours come from the hourly counters (stats.ts `wholeHours`, the
 * same read the statistics use; a bar of an hour or 6 hours is made of whole UTC hours), job_history
 * is read only for the partial hours at a window's ends (the hour it starts in, and the last hour):
 * the cost does not grow with the attempts of the last 7 days (issue 25). Counts are exact (a
 * completed hour up to a minute late in a web process: stats-cache.ts).
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
    const [whole, edges] = await Promise.all([
      wholeHours(ctx, current, false),
      sql<SeriesPoint[]>`
      with w as (select * from jsonb_to_recordset(${JSON.stringify(windows)}::text::jsonb) as x(name text, span interval, step interval, head timestamptz)),
      src as (
        select h.task, h.started_at as at, (h.outcome = 'failed')::int as failed from job_history h
        where h.finished_at is not null and (h.workspace_id = ${p.workspaceId}::uuid or h.workspace_id is null)
          and (h.started_at > ${new Date(now - SERIES['1h'].span)}::timestamptz
               or (h.started_at > ${new Date(now - SERIES['1d'].span)}::timestamptz and h.started_at < ${new Date(head('1d').getTime() + 3_600_000)}::timestamptz)
               or (h.started_at > ${new Date(now - SERIES['7d'].span)}::timestamptz and h.started_at < ${new Date(head('7d').getTime() + 3_600_000)}::timestamptz)))
      select src.task, w.name as window, date_bin(w.step, src.at, timestamptz '1970-01-01 00:00:00+00') as at,
             count(*)::int as finished, sum(src.failed)::int as failed
      from src join w on src.at > ${new Date(now)}::timestamptz - w.span
                     and (date_trunc('hour', src.at, 'UTC') = w.head or src.at >= ${new Date(current)}::timestamptz)
      group by 1, 2, 3`,
    ]);
    const bars = new Map<string, SeriesPoint>();
    const add = (task: string, window: SeriesWindow, at: number, finished: number, failed: number) => {
      const k = `${task}\n${window}\n${at}`;
      const bar = bars.get(k) ?? bars.set(k, { task, window, at: new Date(at), finished: 0, failed: 0 }).get(k)!;
      bar.finished += finished;
      bar.failed += failed;
    };
    for (const e of edges) add(e.task, e.window, e.at.getTime(), e.finished, e.failed);
    // a whole hour is a bar of its own in the day's window, and part of its 6-hour bar (counted from the epoch, as date_bin does) in the 7 days'
    for (const window of ['1d', '7d'] as const) {
      const { step } = SERIES[window];
      for (const h of whole.hours) if (h.hour > head(window)) add(h.task, window, Math.floor(h.hour.getTime() / step) * step, h.finished, h.failed);
    }
    const byKey = (a: SeriesPoint, b: SeriesPoint) =>
      a.task !== b.task ? (a.task < b.task ? -1 : 1) : a.window !== b.window ? (a.window < b.window ? -1 : 1) : a.at.getTime() - b.at.getTime();
    return [...bars.values()].sort(byKey);
  },
});
