import type { Task, TaskList } from 'graphile-worker';
import { billingTasks, type JobServices } from './billing.ts';
import { recorded } from './history.ts';
import { mailCrontab, mailTasks } from './mail.ts';

/**
 * Every task the worker runs, each recorded in job_history. Payloads are `unknown` until
 * checked; each task is idempotent so a retry after a crash is harmless.
 */
export function taskListFor(services: JobServices): TaskList {
  const tasks: TaskList = { ...maintenanceTasks, ...billingTasks(services), ...mailTasks(services) };
  const onError = (err: unknown) => services.log.warn({ err }, 'job history not recorded');
  return Object.fromEntries(Object.entries(tasks).map(([name, task]) => [name, recorded(services.sql, task as Task, onError)]));
}

const maintenanceTasks: TaskList = {
  /** Deletes browser sessions that expired more than a day ago. */
  'sessions:cleanup': async (_payload, helpers) => {
    await helpers.withPgClient((pg) => pg.query(`delete from sessions where expires_at < now() - interval '1 day'`));
  },
  /** Deletes rate-limit counters whose window ended and idempotency keys past their 24 hours. */
  'limits:cleanup': async (_payload, helpers) => {
    await helpers.withPgClient(async (pg) => {
      await pg.query(`delete from rate_limits where expire < (extract(epoch from now()) * 1000)::bigint`);
      await pg.query(`delete from idempotency_keys where expires_at < now()`);
    });
  },
};

/** Recurring tasks, in graphile-worker's crontab format. */
export const crontab = ['17 * * * * sessions:cleanup', '*/10 * * * * limits:cleanup', mailCrontab].join('\n');
