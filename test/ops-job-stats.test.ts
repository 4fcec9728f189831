import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Ctx } from '../src/core/ctx.ts';
import { SERIES, taskSeries } from '../src/core/ops/job-queue.ts';
import { searchJobs } from '../src/core/ops/job-search.ts';
import { taskStats } from '../src/core/ops/stats.ts';
import { runOp } from '../src/core/operation.ts';
import { connect, type Db } from '../src/db/connect.ts';
import { testDb, type TestDb } from './helpers/db.ts';
import { makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { tuplesReadBy } from './helpers/table-reads.ts';
import { consoleAdminCtx } from './helpers/console-ctx.ts';

/**
 * Issue 25: /ops/jobs's per-task statistics and charts come from hourly counters kept with job_history
 * (sql/094) plus the partial hours at the windows' ends: the same counts as counting job_history,
 * at a cost that does not grow with the attempts of the last 7 days.
 */
let db: TestDb;
let a: { ws: Workspace; admin: Person };
let other: Workspace;

beforeAll(async () => {
  db = await testDb();
  const ws = await makeWorkspace(db.sql);
  a = { ws, admin: await makeUser(db.sql, ws, { role: 'admin' }) };
  other = await makeWorkspace(db.sql);
});
afterAll(() => db.close());

const ctxOf = (sql = db.sql): Ctx => consoleAdminCtx(sql, a);

/** Attempts `minutesAgo` minutes back: `n` of them, of `task` in workspace `ws` (null: the process's). */
async function attempts(task: string, ws: string | null, minutesAgo: number, n: number, opts: { failed?: number; ms?: number; running?: boolean } = {}) {
  await db.sql`
    insert into job_history (job_id, task, attempt, workspace_id, outcome, error, started_at, finished_at, duration_ms)
    select 900000000 + g, ${task}, 1, ${ws}::uuid,
           case when ${opts.running ?? false} then 'running' when g <= ${opts.failed ?? 0} then 'failed' else 'succeeded' end,
           case when g <= ${opts.failed ?? 0} then 'boom' end,
           now() - make_interval(mins => ${minutesAgo}), case when not ${opts.running ?? false} then now() - make_interval(mins => ${minutesAgo}) end,
           case when not ${opts.running ?? false} then ${opts.ms ?? 100} + g % 3 end
    from generate_series(1, ${n}) g`;
}

/** What counting job_history itself answers (the statement the page ran before sql/094). */
async function exact() {
  const ws = a.ws.id;
  const stats = await db.sql<{ task: string; window: string; finished: number; failed: number }[]>`
    select h.task, w.name as window, count(*)::int as finished, count(*) filter (where h.outcome = 'failed')::int as failed
    from job_history h
    join (values ('1h', interval '1 hour'), ('24h', interval '1 day'), ('7d', interval '7 days')) w(name, span) on h.started_at > now() - w.span
    where h.finished_at is not null and (h.workspace_id = ${ws}::uuid or h.workspace_id is null)
    group by h.task, w.name order by h.task, w.name`;
  const hourly = await db.sql<{ task: string; hour: Date; finished: number; failed: number }[]>`
    select h.task, date_trunc('hour', h.started_at, 'UTC') as hour, count(*)::int as finished, count(*) filter (where h.outcome = 'failed')::int as failed
    from job_history h
    where h.finished_at is not null and (h.workspace_id = ${ws}::uuid or h.workspace_id is null) and h.started_at > now() - interval '1 day'
    group by 1, 2 order by 1, 2`;
  const windows = Object.entries(SERIES).map(([name, w]) => ({ name, span: `${w.span / 1000} seconds`, step: `${w.step / 1000} seconds` }));
  const series = await db.sql<{ task: string; window: string; at: Date; finished: number; failed: number }[]>`
    select h.task, w.name as window, date_bin(w.step, h.started_at, timestamptz '1970-01-01 00:00:00+00') as at,
           count(*)::int as finished, count(*) filter (where h.outcome = 'failed')::int as failed
    from job_history h
    join (select * from jsonb_to_recordset(${JSON.stringify(windows)}::text::jsonb) as x(name text, span interval, step interval)) w
      on h.started_at > now() - w.span
    where h.finished_at is not null and (h.workspace_id = ${ws}::uuid or h.workspace_id is null)
    group by 1, 2, 3 order by 1, 2, 3`;
  return { stats: [...stats], hourly: [...hourly], series: [...series] };
}

const series = async () => [...(await runOp(taskSeries, ctxOf(), {}))];

const shown = async () => {
  const r = await runOp(taskStats, ctxOf(), {});
  return {
    stats: r.stats.map(({ task, window, finished, failed }) => ({ task, window, finished, failed })),
    hourly: r.hourly.map((h) => ({ ...h })),
    p50: new Map(r.stats.map((s) => [`${s.task} ${s.window}`, s.p50Ms])),
  };
};

it('stats and charts count exactly what job_history holds per task and window, and follow inserts, completions and deletes', async () => {
  for (const [mins, n] of [
    [5, 7],
    [50, 4],
    [65, 3],
    [61 * 5, 9],
    [23 * 60 + 50, 5],
    [24 * 60 + 10, 6],
    [3 * 24 * 60, 11],
    [7 * 24 * 60 - 20, 2],
    [7 * 24 * 60 + 20, 8],
  ] as const) {
    await attempts('stats:render', a.ws.id, mins, n, { failed: 1, ms: 4000 });
    await attempts('stats:cleanup', null, mins, n, { ms: 20 });
    await attempts('stats:render', other.id, mins, n, { ms: 9 }); // another workspace's: never shown here
  }
  await attempts('stats:render', a.ws.id, 30, 4, { running: true });
  expect((await shown()).stats).toEqual((await exact()).stats);
  expect(await series()).toEqual((await exact()).series);
  const before = await shown();
  expect(before.hourly).toEqual((await exact()).hourly);
  // every duration of this workspace's renders is 4000-4002 ms: the histogram's p50 is within 14 %
  expect(Math.abs(before.p50.get('stats:render 7d')! - 4001) / 4001).toBeLessThan(0.14);
  expect(Math.abs(before.p50.get('stats:cleanup 1h')! - 21) / 21).toBeLessThan(0.14);

  // running attempts finish (one statement completing several), some attempts are deleted
  await db.sql`update job_history set outcome = 'succeeded', finished_at = now(), duration_ms = 4000 where task = 'stats:render' and outcome = 'running'`;
  await db.sql`delete from job_history where task = 'stats:cleanup' and started_at < now() - interval '2 days'`;
  await db.sql`delete from job_history where id in (select id from job_history where task = 'stats:render' and started_at > now() - interval '10 minutes' limit 2)`;
  expect((await shown()).stats).toEqual((await exact()).stats);
  expect((await shown()).hourly).toEqual((await exact()).hourly);
  expect(await series()).toEqual((await exact()).series);

  // a rolled-back insert leaves the counters as they were
  await db.sql
    .begin(async (t) => {
      await t`insert into job_history (task, attempt, outcome, started_at, finished_at, duration_ms) values ('stats:render', 1, 'succeeded', now() - interval '3 hours', now(), 5)`;
      throw new Error('roll back');
    })
    .catch(() => {});
  expect((await shown()).stats).toEqual((await exact()).stats);
});

/** Rows read from job_history by every statement the stats operation runs (EXPLAIN ANALYZE of each). */
async function historyRowsRead(): Promise<number> {
  const seen: { query: string; params: unknown[] }[] = [];
  const sql = connect(db.url, { max: 1, debug: (_c, query, params) => seen.push({ query, params }) });
  try {
    await runOp(taskStats, ctxOf(sql), {});
    await runOp(taskSeries, ctxOf(sql), {});
    let rows = 0;
    type PlanNode = { 'Relation Name'?: string; 'Actual Rows'?: number; 'Actual Loops'?: number; 'Rows Removed by Filter'?: number; Plans?: PlanNode[] };
    const walk = (n: PlanNode) => {
      if (n['Relation Name'] === 'job_history') rows += ((n['Actual Rows'] ?? 0) + (n['Rows Removed by Filter'] ?? 0)) * (n['Actual Loops'] ?? 1);
      n.Plans?.forEach(walk);
    };
    for (const s of seen.filter((x) => /^\s*(with|select)/i.test(x.query))) {
      const [plan] = await sql.unsafe(`explain (analyze, format json) ${s.query}`, s.params as never[]);
      walk((plan!['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan);
    }
    return rows;
  } finally {
    await sql.end();
  }
}

it('reads no more job_history rows when the attempts inside the windows grow', async () => {
  const before = await historyRowsRead();
  // 3,000 more attempts in the middle of the 7 days and of the last day, away from the windows' ends
  await attempts('stats:render', a.ws.id, 3 * 24 * 60 + 7, 2000, { ms: 50 });
  await attempts('stats:cleanup', null, 12 * 60 + 7, 1000, { ms: 50 });
  await db.sql`analyze job_history`;
  expect(await historyRowsRead()).toBeLessThanOrEqual(before);
  expect((await shown()).stats).toEqual((await exact()).stats);
  expect(await series()).toEqual((await exact()).series);
});

const historyTuplesReadBy = (t: TestDb, fn: (sql: Db) => Promise<unknown>) => tuplesReadBy(t, 'job_history', fn);

it('a job search reads the attempts that match through indexes, a busy task only its newest, whatever the plan PostgreSQL keeps', async () => {
  // a database of its own: no other connection reads job_history meanwhile
  const own = await testDb();
  try {
    await own.sql`
      insert into job_history (job_id, task, attempt, workspace_id, outcome, started_at, finished_at, duration_ms, payload)
      select 800000000 + g, 'search:noise', 1, ${a.ws.id}::uuid, 'succeeded', now() - make_interval(secs => g), now(), 5, json_build_object('n', g)
      from generate_series(1, 40000) g`;
    await own.sql`analyze job_history`;
    const ctx = (sql: Db) => ({ ...ctxOf(sql) });
    const read = await historyTuplesReadBy(own, async (sql) => {
      // PostgreSQL may plan a prepared statement once for all values from its sixth call on
      for (let i = 0; i < 8; i++) await runOp(searchJobs, ctx(sql), { q: `nothing-matches-${i}` });
    });
    // before: from the sixth search on, each read the attempts newest first looking for 100 matches (all 40,000)
    expect(read).toBeLessThan(40000);

    // a busy task: its newest 100 attempts, read newest first through its index (before: all 40,000 of them, then sorted)
    let found: Awaited<ReturnType<typeof searchJobs.run>> | undefined;
    const busy = await historyTuplesReadBy(own, async (sql) => {
      for (let i = 0; i < 8; i++) found = await runOp(searchJobs, ctx(sql), { q: 'search:noise' });
    });
    expect(found!.history.map((h) => h.jobId)).toEqual(Array.from({ length: 100 }, (_, i) => String(800000001 + i)));
    expect(busy).toBeLessThan(8 * 1000);
  } finally {
    await own.close();
  }
});
