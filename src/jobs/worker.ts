import { EventEmitter } from 'node:events';
import { Logger as WorkerLogger, run, type Runner, type WorkerEvents } from 'graphile-worker';
import { defaultLiveness, WorkerLiveness, type LivenessOptions } from './liveness.ts';
import { crontab } from '../core/jobs/catalog.ts';
import type { JobServices } from './declared.ts';
import { taskListFor } from './tasks.ts';

export interface StartedWorker {
  liveness: WorkerLiveness;
  /** The runner taking jobs now; null between a runner that stopped and its replacement. */
  current: () => Runner | null;
  /** Stops taking jobs, waits for the running ones (graphile-worker aborts them after `drainMs`), then stops beating. */
  stop: () => Promise<void>;
}

export interface WorkerOptions {
  concurrency?: number;
  liveness?: LivenessOptions;
  drainMs?: number;
  pollInterval?: number;
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
export async function startWorker(connectionString: string, services: JobServices, opts: WorkerOptions = {}): Promise<StartedWorker> {
  const { sql, log } = services;
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
  const runner = await run({
    connectionString,
    concurrency: opts.concurrency ?? 4,
    taskList: taskListFor(services),
    crontab,
    logger,
    events,
    noHandleSignals: true,
    pollInterval: opts.pollInterval ?? 1000,
    // After this long a graceful stop signals the running tasks' abortSignal.
    gracefulShutdownAbortTimeout: opts.drainMs ?? 10_000,
    // Unbatched (the default), a job's completion is sent without being awaited, and a graceful
    // stop could end the pool before it was written: the job stayed locked and ran again. Batched
    // (even with no delay) completions are flushed before the pool ends, and retried on error.
    preset: { worker: { completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
  });
  liveness.runnerStarted(ids);
  return runner;
}
