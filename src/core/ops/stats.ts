import { z } from 'zod';
import { defineOp } from '../operation.ts';
import type { CronMinute } from './crontab.ts';

export interface TaskStats {
  task: string;
  window: '1h' | '24h' | '7d';
  finished: number;
  failed: number;
  p50Ms: number | null;
  p95Ms: number | null;
}

/** Per task and window (last hour, day, 7 days): attempts finished, failures, p50/p95 duration; from job_history. */
export const taskStats = defineOp({
  name: 'ops.jobs.stats',
  action: 'ops.read',
  input: z.object({}),
  output: null,
  run: async (ctx): Promise<{ stats: TaskStats[]; hourly: { task: string; hour: Date; finished: number; failed: number }[] }> => {
    const { sql, principal: p } = ctx;
    const now = ctx.now();
    const scope = sql`h.started_at > ${now}::timestamptz - interval '7 days' and h.finished_at is not null
    and (h.workspace_id = ${p.workspaceId}::uuid or h.workspace_id is null)`;
    const stats = await sql<TaskStats[]>`
    select h.task, w.name as window, count(*)::int as finished, count(*) filter (where h.outcome = 'failed')::int as failed,
           percentile_cont(0.5) within group (order by h.duration_ms)::int as "p50Ms",
           percentile_cont(0.95) within group (order by h.duration_ms)::int as "p95Ms"
    from job_history h
    join (values ('1h', interval '1 hour'), ('24h', interval '1 day'), ('7d', interval '7 days')) w(name, span)
      on h.started_at > ${now}::timestamptz - w.span
    where ${scope}
    group by h.task, w.name order by h.task, w.name`;
    const hourly = await sql<{ task: string; hour: Date; finished: number; failed: number }[]>`
    select h.task, date_trunc('hour', h.started_at) as hour, count(*)::int as finished, count(*) filter (where h.outcome = 'failed')::int as failed
    from job_history h where ${scope} and h.started_at > ${now}::timestamptz - interval '1 day'
    group by 1, 2 order by 1, 2`;
    return { stats: [...stats], hourly: [...hourly] };
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
    // project's own record, where graphile-worker's known-crontab table is private to it.
    const known = await sql<{ identifier: string; lastExecution: Date | null; outcome: CronEntry['lastOutcome'] }[]>`
    select t.identifier, h.started_at as "lastExecution", h.outcome
    from unnest(${items.map((i) => i.task)}::text[]) as t(identifier)
    cross join lateral (select h.started_at, h.outcome from job_history h where h.task = t.identifier order by h.started_at desc limit 1) h`;
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
