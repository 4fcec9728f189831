import { addPerson } from '../../src/core/people/users.ts';
import { createWorkspace } from '../../src/core/workspaces/create.ts';
import { latency, type Measured } from '../lib.ts';
import type { Scenario } from '../run.ts';

const HISTORY = Number(process.env.BENCH_OPS_HISTORY ?? 100_000);
const WAITING = Number(process.env.BENCH_OPS_WAITING ?? 10_000);
const FAILED = 200;
const PASSWORD = 'bench-ops-password';
const TARGET_MS = 300;

/**
 * Issue 13: `/ops/jobs` (queue counts, running and failed jobs with their error groups, per-task
 * stats and charts from job_history, the crontab) with 100,000 job_history rows over the last
 * 7 days and 10,000 waiting jobs (plus failed ones), as a signed-in owner; p50/p99 from a
 * separate process; target under 300 ms. The api server runs no worker, so the queue stays put.
 */
export const ops: Scenario = {
  name: 'ops',
  async run(env) {
    const { sql } = env;
    const slug = `ops-${process.pid}`;
    const ws = await createWorkspace(sql, { slug, name: 'Bench Ops Agency' });
    const email = `owner-ops-${process.pid}@bench.test`;
    await addPerson(sql, { workspaceId: ws, email, name: 'Ops Owner', role: 'owner', password: PASSWORD });
    const tasks = ['billing:allocate', 'documents:render', 'documents:deliver', 'mail:poll', 'sessions:cleanup'];
    const began = Date.now();
    await sql`
      insert into job_history (job_id, task, job_key, attempt, max_attempts, workspace_id, run_id, payload, outcome, error, started_at, finished_at, duration_ms)
      select 1000000 + g, (${tasks}::text[])[1 + g % 5], 'bench-' || g, 1, 25, case when g % 5 < 3 then ${ws}::uuid end,
             case when g % 5 < 3 then gen_random_uuid() end, json_build_object('n', g),
             case when g % 20 = 0 then 'failed' else 'succeeded' end, case when g % 20 = 0 then 'SMTP 550 mailbox unavailable ' || (g % 7) end,
             t, t + make_interval(secs => (g % 900) / 100.0), (g % 900) * 10
      from generate_series(1, ${HISTORY}) g, lateral (select now() - make_interval(secs => (g::float8 / ${HISTORY}) * 7 * 86400) as t) s`;
    // waiting jobs: most name a workspace object (the run of another workspace or this one), some name none (the process's)
    const historyS = (Date.now() - began) / 1000;
    await sql`
      select graphile_worker.add_job(
        (${tasks}::text[])[1 + g % 3],
        case when g % 10 = 0 then json_build_object('workspaceId', ${ws}::uuid)
             when g % 10 < 8 then json_build_object('runId', gen_random_uuid())
             else json_build_object('deliveryId', gen_random_uuid()) end,
        run_at => now() - interval '1 minute', job_key => 'bench-wait-' || g)
      from generate_series(1, ${WAITING}) g`;
    await sql`
      select graphile_worker.add_job('documents:deliver', json_build_object('workspaceId', ${ws}::uuid), job_key => 'bench-failed-' || g, max_attempts => 1)
      from generate_series(1, ${FAILED}) g`;
    await sql`
      update graphile_worker._private_jobs set attempts = 1, last_error = 'SMTP 550 mailbox unavailable ' || (id % 7), run_at = now() + interval '1 hour'
      where key like 'bench-failed-%'`;
    await sql`analyze job_history`;
    await sql`analyze graphile_worker._private_jobs`;
    const seeded = `seeded ${HISTORY} job_history rows, ${WAITING} waiting and ${FAILED} failed jobs in ${((Date.now() - began) / 1000).toFixed(1)} s (job_history ${historyS.toFixed(1)} s)`;

    const login = await fetch(`${env.api}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    if (!login.ok) throw new Error(`login failed: ${login.status}`);
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
    const probe = await fetch(`${env.api}/ops/jobs`, { headers: { cookie } });
    const body = await probe.text();
    if (probe.status !== 200 || !body.includes('Failed jobs')) throw new Error(`/ops/jobs answered ${probe.status}`);

    const rows: Measured[] = [];
    const notes = [seeded];
    const jobs = await latency('ops /ops/jobs', `${env.api}/ops/jobs`, { headers: { cookie }, durationMs: 8000, warmupMs: 2000 });
    rows.push(jobs);
    notes.push(
      `/ops/jobs statuses ${JSON.stringify(jobs.statuses)}; p50 ${jobs.p50.toFixed(1)} ms, p99 ${jobs.p99.toFixed(1)} ms (target under ${TARGET_MS} ms: ${jobs.p99 < TARGET_MS ? 'met' : 'MISSED'})`,
    );
    const search = await latency('ops /ops/jobs/search?q=bench-wait-4242', `${env.api}/ops/jobs/search?q=bench-wait-4242`, {
      headers: { cookie },
      durationMs: 4000,
    });
    rows.push(search);
    return { rows, notes };
  },
};
