import type { Task, TaskList } from 'graphile-worker';
import { loadConfig } from '../config.ts';
import type { Db } from '../db/connect.ts';
import { billingTasks, type JobServices } from './billing.ts';
import { recorded } from './history.ts';
import { mailCrontab, mailTasks } from './mail.ts';

/**
 * Every task the worker runs, each recorded in job_history. Payloads are `unknown` until
 * checked; each task is idempotent so a retry after a crash is harmless.
 */
export function taskListFor(services: JobServices): TaskList {
  const tasks: TaskList = { ...maintenanceTasks, ...historyTasks(services), ...billingTasks(services), ...mailTasks(services) };
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

/**
 * Deletes job_history rows that started more than `days` days ago, `batch` rows per statement
 * (each its own short transaction, oldest first by the started_at index), so the cleanup never
 * holds a long lock on the table the worker writes every attempt to. Answers how many it deleted.
 */
export async function deleteOldJobHistory(sql: Db, days: number, batch = 5000): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await sql`
      delete from job_history where id in (
        select id from job_history where started_at < now() - make_interval(days => ${days}) order by started_at limit ${batch})`;
    total += deleted.count;
    if (deleted.count < batch) return total;
  }
}

/** Forgets the queued_jobs rows of jobs graphile-worker no longer holds (finished, cancelled, or left by a crash). */
export async function deleteFinishedQueuedJobs(sql: Db): Promise<number> {
  const gone = await sql`delete from queued_jobs q where not exists (select 1 from graphile_worker.jobs j where j.id = q.job_id)`;
  return gone.count;
}

/** The job_history retention (JOB_HISTORY_RETENTION_DAYS, 30 days by default), read when the task runs. */
function historyTasks(services: Pick<JobServices, 'log' | 'sql'>, days = () => loadConfig().JOB_HISTORY_RETENTION_DAYS): TaskList {
  return {
    'history:cleanup': async () => {
      const n = await deleteOldJobHistory(services.sql, days());
      if (n > 0) services.log.info({ deleted: n }, 'job history cleaned up');
      await deleteFinishedQueuedJobs(services.sql);
    },
  };
}

/** Recurring tasks, in graphile-worker's crontab format. */
export const crontab = [
  '17 * * * * sessions:cleanup',
  '*/10 * * * * limits:cleanup',
  '41 * * * * history:cleanup',
  // Every minute: a delivery whose job died on its last attempt is settled within about 1.5 minutes (30 s liveness + the next tick).
  '* * * * * deliveries:sweep',
  mailCrontab,
].join('\n');
