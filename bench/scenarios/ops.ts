import { addPerson } from '../../src/core/people/users.ts';
import { createWorkspace } from '../../src/core/workspaces/create.ts';
import type { Db } from '../../src/db/connect.ts';
import { latency, target, type Measured } from '../lib.ts';
import type { Scenario } from '../scenario.ts';

const HISTORY = Number(process.env.BENCH_OPS_HISTORY ?? 100_000);
const WAITING = Number(process.env.BENCH_OPS_WAITING ?? 10_000);
const FAILED = 200;
const OTHER_WORKSPACES = 20;
const PASSWORD = 'bench-ops-password';
/** Issue 25's targets, p50 on a quiet machine. */
const TARGETS = { jobs: 100, search: 150 };

export interface OpsSeed {
  workspaceId: string;
  email: string;
  password: string;
  note: string;
}

/**
 * The job pages' data: a workspace with an owner, HISTORY job_history rows over the last 7 days
 * (three in five of this workspace, the rest the process's), WAITING due jobs queued as the core
 * queues them (a queued_jobs row with the workspace: one in ten this workspace's, seven in ten
 * one of OTHER_WORKSPACES others', two in ten the process's, with no row) and FAILED failed jobs.
 */
export async function seedOps(sql: Db, tag: string): Promise<OpsSeed> {
  const ws = await createWorkspace(sql, { slug: `ops-${tag}`, name: 'Bench Ops Agency' });
  const others: string[] = [];
  for (let i = 0; i < OTHER_WORKSPACES; i++) others.push(await createWorkspace(sql, { slug: `ops-${tag}-other-${i}`, name: `Other ${i}` }));
  const email = `owner-ops-${tag}@bench.test`;
  await addPerson(sql, { workspaceId: ws, email, name: 'Ops Owner', role: 'owner', password: PASSWORD });
  const tasks = ['billing:allocate', 'documents:render', 'documents:deliver', 'mail:poll', 'sessions:cleanup'];
  const began = Date.now();
  // the job_history_follows trigger looks each row's job up; planned while the table is empty and
  // analyzed (the bench's vacuum analyze), that lookup is a sequential scan per row: 100,000 rows
  // took more than 10 minutes. The index is what the trigger uses once the table has rows.
  await sql.begin(async (t) => {
    await t`set local enable_seqscan = off`;
    await t`
    insert into job_history (job_id, task, job_key, attempt, max_attempts, workspace_id, run_id, payload, outcome, error, started_at, finished_at, duration_ms)
    select 1000000 + g, (${tasks}::text[])[1 + g % 5], 'bench-' || g, 1, 25, case when g % 5 < 3 then ${ws}::uuid end,
           case when g % 5 < 3 then gen_random_uuid() end, json_build_object('n', g),
           case when g % 20 = 0 then 'failed' else 'succeeded' end, case when g % 20 = 0 then 'SMTP 550 mailbox unavailable ' || (g % 7) end,
           t, t + make_interval(secs => (g % 900) / 100.0), (g % 900) * 10
    from generate_series(1, ${HISTORY}) g, lateral (select now() - make_interval(secs => (g::float8 / ${HISTORY}) * 7 * 86400) as t) s`;
  });
  const historyS = (Date.now() - began) / 1000;
  await sql`
    with spec as (
      select g, (${tasks}::text[])[1 + g % 3] as task,
             case when g % 10 = 0 then ${ws}::uuid when g % 10 < 8 then (${others}::uuid[])[1 + g % ${OTHER_WORKSPACES}] end as workspace
      from generate_series(1, ${WAITING}) g),
    job as (
      select s.*, (graphile_worker.add_job(s.task, json_build_object('workspaceId', s.workspace, 'runId', gen_random_uuid()),
                   run_at => now() - interval '1 minute', job_key => 'bench-wait-' || s.g)).id
      from spec s)
    insert into queued_jobs (job_id, workspace_id, task, payload)
    select job.id, job.workspace, job.task, json_build_object('workspaceId', job.workspace, 'n', job.g)::jsonb from job where job.workspace is not null`;
  await sql`
    with job as (
      select (graphile_worker.add_job('documents:deliver', json_build_object('workspaceId', ${ws}::uuid), job_key => 'bench-failed-' || g, max_attempts => 1)).id
      from generate_series(1, ${FAILED}) g)
    insert into queued_jobs (job_id, workspace_id, task, payload) select job.id, ${ws}::uuid, 'documents:deliver', '{}'::jsonb from job`;
  // seeding only: a failed job is one a worker took and saw throw (the console itself reads the public view)
  await sql`
    update graphile_worker._private_jobs set attempts = 1, last_error = 'SMTP 550 mailbox unavailable ' || (id % 7), run_at = now() + interval '1 hour'
    where key like 'bench-failed-%'`;
  await sql`analyze job_history`;
  await sql`analyze queued_jobs`;
  await sql`analyze graphile_worker._private_jobs`;
  const note = `seeded ${HISTORY} job_history rows, ${WAITING} waiting and ${FAILED} failed jobs in ${((Date.now() - began) / 1000).toFixed(1)} s (job_history ${historyS.toFixed(1)} s)`;
  return { workspaceId: ws, email, password: PASSWORD, note };
}

/**
 * Issues 13 and 25: `/ops/jobs` (queue counts, running and failed jobs with their error groups,
 * per-task stats and charts from job_history, the crontab) and `/ops/jobs/search` with 100,000
 * job_history rows and 10,000 waiting jobs, as a signed-in owner; p50/p99 from a separate
 * process. The api server runs no worker, so the queue stays put.
 */
export const ops: Scenario = {
  name: 'ops',
  async run(env) {
    const seed = await seedOps(env.sql, String(process.pid));
    const login = await fetch(`${env.api}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: seed.email, password: seed.password }),
    });
    if (!login.ok) throw new Error(`login failed: ${login.status}`);
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
    const probe = await fetch(`${env.api}/ops/jobs`, { headers: { cookie } });
    const body = await probe.text();
    if (probe.status !== 200 || !body.includes('Failed jobs')) throw new Error(`/ops/jobs answered ${probe.status}`);

    const rows: Measured[] = [];
    const notes = [seed.note];
    const jobs = await latency('ops /ops/jobs', `${env.api}/ops/jobs`, { headers: { cookie }, durationMs: 8000, warmupMs: 2000 });
    rows.push(jobs);
    notes.push(`/ops/jobs statuses ${JSON.stringify(jobs.statuses)}; p99 ${jobs.p99.toFixed(1)} ms`);
    notes.push(target({ issue: 25, name: '/ops/jobs p50', value: jobs.p50, limit: TARGETS.jobs, unit: 'ms' }));
    for (const q of ['bench-wait-4242', 'documents:render', 'SMTP 550']) {
      const search = await latency(`ops /ops/jobs/search?q=${q}`, `${env.api}/ops/jobs/search?q=${encodeURIComponent(q)}`, {
        headers: { cookie },
        durationMs: 4000,
      });
      rows.push(search);
      notes.push(`/ops/jobs/search?q=${q} statuses ${JSON.stringify(search.statuses)}`);
      notes.push(target({ issue: 25, name: `/ops/jobs/search?q=${q} p50`, value: search.p50, limit: TARGETS.search, unit: 'ms' }));
    }
    return { rows, notes };
  },
};
