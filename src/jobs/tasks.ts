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
  /** Deletes rate-limit counters whose window ended and idempotency keys past their 24 hours. */
  'limits:cleanup': async (_payload, helpers) => {
    await helpers.withPgClient(async (pg) => {
      await pg.query(`delete from rate_limits where expire < (extract(epoch from now()) * 1000)::bigint`);
      await pg.query(`delete from idempotency_keys where expires_at < now()`);
    });
  },
};

/** Recurring tasks, in graphile-worker's crontab format. */
export const crontab = ['17 * * * * sessions:cleanup', '*/10 * * * * limits:cleanup'].join('\n');
