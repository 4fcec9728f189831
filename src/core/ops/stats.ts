import { z } from 'zod';
import type { Ctx } from '../ctx.ts';
import { defineOp } from '../operation.ts';
import type { CronMinute } from './crontab.ts';
import type { Hourly, WholeHours } from './stats-cache.ts';
import { DAY, floorHour, Histogram, HOUR, WEEK } from './stats-histogram.ts';

const WINDOWS = [
  ['1h', HOUR],
  ['24h', DAY],
  ['7d', WEEK],
] as const;

export interface TaskStats {
  task: string;
  window: '1h' | '24h' | '7d';
  finished: number;
  failed: number;
  p50Ms: number | null;
  p95Ms: number | null;
}

/**
 * The whole hours the statistics and the charts need, read once per workspace and hour by a web
 * process (`ctx.caches.jobStats`: see stats-cache.ts for how stale that copy may be) and afresh
 * where there is no process cache, then without the duration buckets unless `buckets` asks.
 */
export function wholeHours(ctx: Ctx, current: number, buckets = true): Promise<WholeHours> {
  const cache = ctx.caches?.jobStats;
  return cache ? cache.get(`${ctx.principal.workspaceId} ${current}`, () => readWholeHours(ctx, current, true)) : readWholeHours(ctx, current, buckets);
}

async function readWholeHours({ sql, principal: p }: Ctx, current: number, withBuckets: boolean): Promise<WholeHours> {
  const scope = sql`s.workspace_id in (${p.workspaceId}::uuid, '00000000-0000-0000-0000-000000000000'::uuid)
    and s.hour > ${new Date(current - WEEK)}::timestamptz and s.hour < ${new Date(current)}::timestamptz`;
  // the durations are summed here (64 numbers per task, not per hour)
  const [hours, buckets] = await Promise.all([
    sql<Hourly[]>`
      select s.task, s.hour, sum(s.finished)::int as finished, sum(s.failed)::int as failed
      from job_stats_hourly s where ${scope} group by 1, 2 having sum(s.finished) > 0`,
    withBuckets
      ? sql<WholeHours['buckets']>`
      select s.task, s.hour > ${new Date(current - DAY)}::timestamptz as recent, u.b::int - 1 as b, sum(u.n)::int as n
      from job_stats_hourly s cross join unnest(s.buckets) with ordinality as u(n, b)
      where ${scope} and u.n <> 0 group by 1, 2, 3`
      : [],
  ]);
  return { hours: [...hours], buckets: [...buckets] };
}

/**
 * Per task and window (last hour, day, 7 days): attempts finished, failures, p50/p95 duration; and
 * per task and clock hour of the last day, attempts finished and failed. Read from the hourly
 * counters (sql/094, job_stats_hourly: whole UTC hours, `wholeHours`) plus job_history's rows for
 * the partial hours at a window's ends, so the cost does not grow with the attempts of the last 7
 * days. Counts are exact (up to a minute late for a completed hour in a web process: stats-cache.ts);
 * percentiles come from the duration histogram (within 14 %, see stats-histogram.ts).
 */
export const taskStats = defineOp({
  name: 'ops.jobs.stats',
  action: 'ops.read',
  input: z.object({}),
  output: null,
  run: async (ctx): Promise<{ stats: TaskStats[]; hourly: Hourly[] }> => {
    const { sql, principal: p } = ctx;
    const now = ctx.now().getTime();
    const current = floorHour(now);
    // the hour each window starts in (partial: read from job_history), the whole hours after it from the counters
    const heads = WINDOWS.map(([, span]) => floorHour(now - span));
    const [whole, edges] = await Promise.all([
      wholeHours(ctx, current),
      sql<{ task: string; hour: Date; b: number; n: number; x: number }[]>`
      select h.task, date_trunc('hour', h.started_at, 'UTC') as hour, job_duration_bucket(h.duration_ms) as b, count(*)::int as n,
             count(*) filter (where h.outcome = 'failed')::int as x
      from job_history h
      where h.finished_at is not null and (h.workspace_id = ${p.workspaceId}::uuid or h.workspace_id is null)
        and (h.started_at > ${new Date(now - HOUR)}::timestamptz
             or (h.started_at > ${new Date(now - DAY)}::timestamptz and h.started_at < ${new Date(heads[1]! + HOUR)}::timestamptz)
             or (h.started_at > ${new Date(now - WEEK)}::timestamptz and h.started_at < ${new Date(heads[2]! + HOUR)}::timestamptz))
      group by 1, 2, 3`,
    ]);
    // whole hours of the last day (after the hour the day's window starts in) count in the day's window too
    const recent = (hour: Date) => hour.getTime() > heads[1]!;
    const stats: TaskStats[] = [];
    WINDOWS.forEach(([window], i) => {
      const by = new Map<string, Histogram>();
      const of = (task: string) => by.get(task) ?? by.set(task, new Histogram()).get(task)!;
      // whole hours: none in the last hour's window, the last day's in the day's, all in the 7 days'
      if (window !== '1h') {
        for (const c of whole.hours) if (window === '7d' || recent(c.hour)) of(c.task).count(c.finished, c.failed);
        for (const b of whole.buckets) if (window === '7d' || b.recent) of(b.task).add(b.b, b.n);
      }
      for (const e of edges) if (e.hour.getTime() === heads[i]! || e.hour.getTime() >= current) of(e.task).count(e.n, e.x).add(e.b, e.n);
      for (const [task, h] of by)
        if (h.finished > 0) stats.push({ task, window, finished: h.finished, failed: h.failed, p50Ms: h.percentile(0.5), p95Ms: h.percentile(0.95) });
    });
    stats.sort((a, b) => (a.task === b.task ? (a.window < b.window ? -1 : 1) : a.task < b.task ? -1 : 1));
    const hours = new Map<string, Hourly>();
    const hourOf = (task: string, hour: Date) => {
      const k = `${task} ${hour.getTime()}`;
      return hours.get(k) ?? hours.set(k, { task, hour, finished: 0, failed: 0 }).get(k)!;
    };
    for (const c of whole.hours) if (recent(c.hour)) Object.assign(hourOf(c.task, c.hour), { finished: c.finished, failed: c.failed });
    for (const e of edges) {
      if (e.hour.getTime() !== heads[1]! && e.hour.getTime() < current) continue;
      const h = hourOf(e.task, e.hour);
      h.finished += e.n;
      h.failed += e.x;
    }
    const hourly = [...hours.values()].sort((a, b) => (a.task === b.task ? a.hour.getTime() - b.hour.getTime() : a.task < b.task ? -1 : 1));
    return { stats, hourly };
  },
});

export interface CronEntry {
  task: string;
  schedule: string;
  lastExecution: Date | null;
  lastOutcome: 'running' | 'succeeded' | 'failed' | null;
  nextRun: Date | null;
}

/** The next minute (UTC) after `from` the crontab line matches, within 40 days. */
function nextMatch(match: (d: CronMinute) => boolean, from: Date): Date | null {
  const t = new Date(Math.floor(from.getTime() / 60_000) * 60_000 + 60_000);
  for (let i = 0; i < 40 * 24 * 60; i++, t.setTime(t.getTime() + 60_000)) {
    if (match({ min: t.getUTCMinutes(), hour: t.getUTCHours(), date: t.getUTCDate(), month: t.getUTCMonth() + 1, dow: t.getUTCDay() })) return new Date(t);
  }
  return null;
}

/**
 * The process's crontab (`ctx.crontab`, parsed at the edge) with each task's last execution and
 * outcome (its latest attempt) and next run.
 */
export const crontabView = defineOp({
  name: 'ops.jobs.crontab',
  action: 'ops.read',
  input: z.object({}),
  output: null,
  run: async (ctx): Promise<CronEntry[]> => {
    const { sql } = ctx;
    const items = ctx.crontab ?? [];
    // The latest attempt of each crontab task, from job_history (task, started_at desc index): the
    // project's own record, where graphile-worker's known-crontab table is private to it. The task
    // is matched as a range, not with `=`: with `=` PostgreSQL may walk the started_at index newest
    // first and filter by task, which reads every attempt for a task that has none (a crontab
    // task not run yet: 4 such tasks cost 80-110 ms at 100,000 attempts, issue 25); the range
    // leaves only the (task, started_at) index to give the order, one index probe per task.
    const known = await sql<{ identifier: string; lastExecution: Date | null; outcome: CronEntry['lastOutcome'] }[]>`
    select t.identifier, h.started_at as "lastExecution", h.outcome
    from unnest(${items.map((i) => i.task)}::text[]) as t(identifier)
    cross join lateral (select h.started_at, h.outcome from job_history h
                        where h.task >= t.identifier and h.task <= t.identifier order by h.task, h.started_at desc limit 1) h`;
    return items.map((item) => {
      const k = known.find((r) => r.identifier === item.identifier || r.identifier === item.task);
      return {
        task: item.task,
        schedule: item.schedule,
        lastExecution: k?.lastExecution ?? null,
        lastOutcome: k?.outcome ?? null,
        nextRun: nextMatch(item.match, ctx.now()),
      };
    });
  },
});
