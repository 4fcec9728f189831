import type { TaskList } from 'graphile-worker';

/**
 * Every task the worker runs. Payloads are `unknown` until checked; each task is
 * idempotent so a retry after a crash is harmless.
 */
export const taskList: TaskList = {
  /** Deletes browser sessions that expired more than a day ago. */
  'sessions:cleanup': async (_payload, helpers) => {
    await helpers.withPgClient((pg) => pg.query(`delete from sessions where expires_at < now() - interval '1 day'`));
  },
};

/** Recurring tasks, in graphile-worker's crontab format. */
export const crontab = ['17 * * * * sessions:cleanup'].join('\n');
