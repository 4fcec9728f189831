import { EventEmitter } from 'node:events';
import { Logger as WorkerLogger, run, type Runner, type RunnerOptions, type WorkerEvents } from 'graphile-worker';
import { defaultLiveness, WorkerLiveness, type LivenessOptions } from './liveness.ts';
import { crontab } from '../core/jobs/catalog.ts';
import type { JobServices } from './declared.ts';
import { JobHistory } from './history.ts';
import { taskListFor } from './tasks.ts';

export interface StartedWorker {
  liveness: WorkerLiveness;
  /** The runner taking jobs now; null between a runner that stopped and its replacement. */
  current: () => Runner | null;
  /** Stops taking jobs, waits for the running ones (graphile-worker aborts them after `drainMs`), writes their history, then stops beating. */
  stop: () => Promise<void>;
}

export interface WorkerOptions {
  concurrency?: number;
  liveness?: LivenessOptions;
  drainMs?: number;
  pollInterval?: number;
  /** The crontab the runners schedule; the catalog's by default (a test gives one that backfills a missed tick instead of waiting for the next minute). */
  crontab?: string;
}

/** Pause before starting a runner again: 1 s, 2 s, 4 s, then every 5 s while PostgreSQL stays away. */
const restartDelay = (attempt: number) => Math.min(1000 * 2 ** attempt, 5000);

/**
 * Starts graphile-worker against the same database (it coordinates through PostgreSQL itself),
 * and keeps a runner going. graphile-worker 0.17 ends its runner when the pool fails (a connect
 * refused while PostgreSQL restarts is not among the errors it retries), and `runner.promise`
 * then resolves rather than rejects; so every end that `stop()` did not ask for starts a new
 * runner, with a short back-off while the database refuses. The heartbeat names only a running
 * runner's ids and is written only while one runs: it says that jobs can be taken here.
 */
export async function startWorker(connectionString: string, given: JobServices, opts: WorkerOptions = {}): Promise<StartedWorker> {
  const { sql, log } = given;
  // one history buffer for the process's runners: rows kept through a runner's replacement are written by the next
  const history = given.history ?? new JobHistory(sql, log);
  const services: JobServices = { ...given, history };
  const liveness = new WorkerLiveness(sql, log, opts.liveness ?? defaultLiveness);
  let current: Runner | null = await startRunner(connectionString, services, opts, liveness);
  await liveness.start();

  let stopping = false;
  let wake = () => {};
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => (clearTimeout(timer), resolve());
    });
  const supervised = (async () => {
    for (let attempt = 0; ;) {
      if (current) {
        await current.promise;
        current = null;
        liveness.runnerStopped();
        if (stopping) return;
        log.error('worker runner stopped; starting a new one');
      }
      await pause(restartDelay(attempt++));
      if (stopping) return;
      try {
        current = await startRunner(connectionString, services, opts, liveness);
        // stop() came while this runner was starting: end it too (the loop then waits for it).
        if (stopping) void current.stop().catch(() => {});
        else log.warn({ attempt }, 'worker runner started again');
        attempt = 0;
      } catch (err) {
        log.warn({ err, attempt }, 'worker runner could not start; trying again');
      }
    }
  })();

  return {
    liveness,
    current: () => current,
    stop: async () => {
      stopping = true;
      wake();
      await current?.stop().catch(() => {}); // a runner that ended by itself is already stopped
      await supervised;
      // every task has returned: write the attempts still waiting before the pool closes
      await history.stop();
      await liveness.stop();
    },
  };
}

async function startRunner(connectionString: string, services: JobServices, opts: WorkerOptions, liveness: WorkerLiveness): Promise<Runner> {
  const { log } = services;
  const logger = new WorkerLogger((scope) => (level, message, meta) => {
    const lvl = level === 'error' ? 'error' : level === 'warning' ? 'warn' : 'debug';
    // node-postgres hangs its whole client (5 KB of state) on pool errors: keep the message and code.
    const error = meta?.error as { message?: string; code?: string } | undefined;
    log[lvl]({ worker: scope, ...meta, ...(error ? { error: { message: error.message, code: error.code } } : {}) }, message);
  });
  // The pool is created inside run(), before it returns: listen on our own emitter to learn its id.
  // graphile-worker 0.17 locks jobs with the pool's id (earlier versions with each worker's id).
  const ids = new Set<string>();
  const events: WorkerEvents = new EventEmitter();
  events.on('pool:create', ({ workerPool }) => ids.add(workerPool.id));
  events.on('worker:create', ({ worker }) => ids.add(worker.workerId));
  const runner = await run({ connectionString, taskList: taskListFor(services), crontab: opts.crontab ?? crontab, logger, events, ...runnerOptions(opts) });
  liveness.runnerStarted(ids);
  return runner;
}

/**
 * graphile-worker's options as the project runs it (also what `npm run bench -- jobs` gives
 * graphile-worker alone, to compare the project's wrapper with it).
 */
export function runnerOptions(opts: WorkerOptions): RunnerOptions {
  const concurrency = opts.concurrency ?? 4;
  return {
    concurrency,
    noHandleSignals: true,
    pollInterval: opts.pollInterval ?? 1000,
    // After this long a graceful stop signals the running tasks' abortSignal.
    gracefulShutdownAbortTimeout: opts.drainMs ?? 10_000,
    preset: {
      worker: {
        // Unbatched (the default), a job's completion is sent without being awaited, and a graceful
        // stop could end the pool before it was written: the job stayed locked and ran again. Batched
        // (even with no delay) completions are flushed before the pool ends, and retried on error.
        completeJobBatchDelay: 0,
        failJobBatchDelay: 0,
        // The pool fetches (and locks) a few jobs at once and hands them to its workers without a
        // round trip each. Kept small: jobs locked here wait for this process (a killed worker's are
        // freed by the liveness sweep like its running ones), and most tasks (renders, deliveries)
        // take far longer than a fetch. A graceful stop returns the ones not started.
        localQueue: { size: LOCAL_QUEUE_PER_SLOT * concurrency },
      },
    },
  };
}

/** Jobs the local queue holds per concurrent slot (see runnerOptions). */
const LOCAL_QUEUE_PER_SLOT = 2;
