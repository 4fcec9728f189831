import { Logger as WorkerLogger, run, type Runner } from 'graphile-worker';
import type { Logger } from '../log.ts';
import { crontab, taskList } from './tasks.ts';

/** Starts graphile-worker against the same database; it coordinates through PostgreSQL itself. */
export async function startWorker(connectionString: string, log: Logger, opts: { concurrency?: number } = {}): Promise<Runner> {
  const logger = new WorkerLogger((scope) => (level, message, meta) => {
    const lvl = level === 'error' ? 'error' : level === 'warning' ? 'warn' : 'debug';
    log[lvl]({ worker: scope, ...meta }, message);
  });
  return run({
    connectionString,
    concurrency: opts.concurrency ?? 4,
    taskList,
    crontab,
    logger,
    noHandleSignals: true,
    pollInterval: 1000,
  });
}
