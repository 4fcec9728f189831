import { EventEmitter } from 'node:events';
import { Logger as WorkerLogger, run, type Runner, type WorkerEvents } from 'graphile-worker';
import { defaultLiveness, WorkerLiveness, type LivenessOptions } from './liveness.ts';
import type { JobServices } from './billing.ts';
import { crontab, taskListFor } from './tasks.ts';

export interface StartedWorker {
  runner: Runner;
  liveness: WorkerLiveness;
  /** Stops taking jobs, waits for the running ones (graphile-worker aborts them after `drainMs`), then stops beating. */
  stop: () => Promise<void>;
}

/** Starts graphile-worker against the same database; it coordinates through PostgreSQL itself. */
export async function startWorker(
  connectionString: string,
  services: JobServices,
  opts: { concurrency?: number; liveness?: LivenessOptions; drainMs?: number; pollInterval?: number } = {},
): Promise<StartedWorker> {
  const { sql, log } = services;
  const logger = new WorkerLogger((scope) => (level, message, meta) => {
    const lvl = level === 'error' ? 'error' : level === 'warning' ? 'warn' : 'debug';
    // node-postgres hangs its whole client (5 KB of state) on pool errors: keep the message and code.
    const error = meta?.error as { message?: string; code?: string } | undefined;
    log[lvl]({ worker: scope, ...meta, ...(error ? { error: { message: error.message, code: error.code } } : {}) }, message);
  });
  const liveness = new WorkerLiveness(sql, log, opts.liveness ?? defaultLiveness);
  // The pool is created inside run(), before it returns: listen on our own emitter to learn its id.
  // graphile-worker 0.17 locks jobs with the pool's id (earlier versions with each worker's id).
  const events: WorkerEvents = new EventEmitter();
  events.on('pool:create', ({ workerPool }) => liveness.addWorker(workerPool.id));
  events.on('worker:create', ({ worker }) => liveness.addWorker(worker.workerId));
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
  await liveness.start();
  return {
    runner,
    liveness,
    stop: async () => {
      await runner.stop();
      await liveness.stop();
    },
  };
}
