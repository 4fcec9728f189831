import { EventEmitter } from 'node:events';
import { Logger as WorkerLogger, run, type RunnerOptions, type Task, type WorkerEvents } from 'graphile-worker';
import { z } from 'zod';
import type { Db } from '../../src/db/connect.ts';
import { defineJob } from '../../src/core/jobs/define.ts';
import { jobTask, type JobServices } from '../../src/jobs/declared.ts';
import { JobHistory } from '../../src/jobs/history.ts';
import { runnerOptions } from '../../src/jobs/worker.ts';
import { makeLogger } from '../../src/log.ts';
import { target } from '../lib.ts';
import type { Scenario } from '../scenario.ts';

const JOBS = Number(process.env.BENCH_JOBS ?? 5000);
const ROUNDS = Number(process.env.BENCH_JOBS_ROUNDS ?? 5);
const TARGET = 0.75;
const TASK = 'bench:noop';

/** A declared job of the bench's own (the project's catalog has no no-op job). */
const noopJob = defineJob({ task: TASK, payload: z.object({ workspaceId: z.uuid(), n: z.number() }), maxAttempts: 1, key: (p) => `${TASK}:${p.n}` });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Variant {
  name: string;
  options: RunnerOptions;
  /** The task list and what must be written before the round counts as done (the history buffer). */
  tasks: () => { task: Task; settle: () => Promise<void> };
}

/**
 * Queues JOBS no-op jobs, runs them through one runner, and answers jobs per second from the
 * first job's start to the last one's success (and, wrapped, its history row written).
 */
async function round(dbUrl: string, sql: Db, v: Variant, workspaceId: string): Promise<number> {
  await sql`
    select graphile_worker.add_job(${TASK}::text, json_build_object('workspaceId', ${workspaceId}::uuid, 'n', g), max_attempts => 1)
    from generate_series(1, ${JOBS}) g`;
  const { task, settle } = v.tasks();
  const events: WorkerEvents = new EventEmitter();
  let first = 0;
  let done = 0;
  let failed = 0;
  const finished = new Promise<void>((resolve) => {
    events.on('job:start', () => (first ||= performance.now()));
    events.on('job:complete', ({ error }) => {
      if (error) failed++;
      if (++done === JOBS) resolve();
    });
  });
  const runner = await run({ ...v.options, connectionString: dbUrl, taskList: { [TASK]: task }, events, logger: new WorkerLogger(() => () => {}) });
  await finished;
  await settle();
  const ms = performance.now() - first;
  await runner.stop();
  if (failed) throw new Error(`${v.name}: ${failed} jobs failed`);
  return (JOBS / ms) * 1000;
}

/**
 * Issue 25: no-op jobs through graphile-worker alone (the project's options: concurrency 4,
 * completions batched, the local queue) and through the project's wrapper (payload checked by the
 * declaration, the attempt recorded in job_history by the buffered writer), interleaved in one run;
 * the wrapper must keep at least 75 % of graphile-worker's own throughput. graphile-worker without
 * its local queue (the options before issue 25) is shown for reference.
 */
export const jobs: Scenario = {
  name: 'jobs',
  async run(env) {
    const { sql, dbUrl } = env;
    const log = makeLogger('silent');
    const services: JobServices = {
      sql,
      now: () => new Date(),
      log,
      pdf: null,
      mailer: { send: () => Promise.reject(new Error('no mail')) },
      mailFrom: 'bench@bench.test',
    };
    const project = runnerOptions({});
    const noLocalQueue: RunnerOptions = { ...project, preset: { worker: { ...project.preset!.worker, localQueue: undefined } } };
    const bare = (): { task: Task; settle: () => Promise<void> } => ({ task: async () => {}, settle: async () => {} });
    const wrapped = () => {
      const history = new JobHistory(sql, log);
      return { task: jobTask(noopJob, { ...services, history }, async () => {}), settle: () => history.stop() };
    };
    const variants: Variant[] = [
      { name: 'graphile-worker alone', options: project, tasks: bare },
      { name: 'project wrapper', options: project, tasks: wrapped },
      { name: 'graphile-worker alone, no local queue', options: noLocalQueue, tasks: bare },
    ];
    const [{ id: workspaceId }] = await sql<[{ id: string }]>`select gen_random_uuid()::text as id`;
    const [{ before }] = await sql<[{ before: number }]>`select count(*)::int as before from job_history where task = ${TASK}`;
    const rates = new Map<string, number[]>(variants.map((v) => [v.name, []]));
    // interleaved, the order flipped every round, so a machine that gets busier or quieter weighs on both alike
    for (let r = 0; r < ROUNDS; r++)
      for (const v of r % 2 ? [...variants].reverse() : variants) rates.get(v.name)!.push(await round(dbUrl, sql, v, workspaceId));
    const [{ after }] = await sql<[{ after: number }]>`select count(*)::int as after from job_history where task = ${TASK} and outcome = 'succeeded'`;
    const rate = (name: string) => median(rates.get(name)!);
    // the ratio of each round's pair (measured seconds apart), then their median
    const ratios = rates.get('project wrapper')!.map((w, i) => w / rates.get('graphile-worker alone')![i]!);
    const ratio = median(ratios);
    const notes = variants.map(
      (v) =>
        `${v.name}: median ${rate(v.name).toFixed(0)} jobs/s (rounds ${rates
          .get(v.name)!
          .map((x) => x.toFixed(0))
          .join(', ')})`,
    );
    notes.push(
      `${JOBS} no-op jobs per round, ${ROUNDS} rounds, concurrency ${String(project.concurrency)}; job_history rows written by the wrapper: ${after - before} (expected ${JOBS * ROUNDS})`,
    );
    notes.push(`wrapper / graphile-worker alone per round: ${ratios.map((x) => `${(x * 100).toFixed(0)} %`).join(', ')}`);
    notes.push(
      target({
        issue: 25,
        name: 'no-op jobs through the wrapper / graphile-worker alone (median of rounds)',
        value: ratio * 100,
        limit: TARGET * 100,
        unit: '%',
        atLeast: true,
      }),
    );
    await sql`delete from job_history where task = ${TASK}`;
    return { rows: [], notes };
  },
};
