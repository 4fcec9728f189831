import type { Task, TaskList } from 'graphile-worker';
import { deleteExpiredSessions } from '../core/auth/sessions.ts';
import { deleteExpiredOAuthRecords } from '../core/oauth/records.ts';
import { deleteExpiredIdempotencyKeys } from '../core/idempotency/keys.ts';
import { crons, jobs } from '../core/jobs/catalog.ts';
import { deleteFinishedQueuedJobs, deleteOldJobHistory } from '../core/jobs/retention.ts';
import { deleteExpiredCounters } from '../core/limits/store.ts';
import { refreshStoredHtml } from '../core/tickets/markdown-refresh.ts';
import { billingTasks, sweepDeliveries } from './billing.ts';
import { cronTask, type JobServices } from './declared.ts';
import { mailTasks } from './mail.ts';
import { peopleTasks } from './people.ts';

/** JOB_HISTORY_RETENTION_DAYS's default, for a worker started without it (tests). */
const DEFAULT_RETENTION_DAYS = 30;

/**
 * Every task the worker runs, by its declaration (src/core/jobs/catalog.ts): the two maps below
 * are typed by the catalog, so a declared job or crontab task without a handler does not compile,
 * and no task name is written here. Each task is idempotent, so a retry after a crash is harmless.
 */
export function taskListFor(services: JobServices): TaskList {
  const billing = billingTasks(services);
  const mail = mailTasks(services);
  const people = peopleTasks(services);
  const forJobs: Record<keyof typeof jobs, Task> = {
    allocate: billing.allocate,
    render: billing.render,
    deliver: billing.deliver,
    poll: mail.poll,
    invitationMail: people.invitationMail,
    resetMail: people.resetMail,
  };
  const forCrons: Record<keyof typeof crons, Task> = {
    sessionsCleanup: cronTask(crons.sessionsCleanup, services, async ({ sql }) => {
      await deleteExpiredSessions(sql);
      await deleteExpiredOAuthRecords(sql);
    }),
    limitsCleanup: cronTask(crons.limitsCleanup, services, async ({ sql }) => {
      await deleteExpiredCounters(sql);
      await deleteExpiredIdempotencyKeys(sql);
    }),
    historyCleanup: cronTask(crons.historyCleanup, services, async ({ sql, log }) => {
      const n = await deleteOldJobHistory(sql, services.historyRetentionDays ?? DEFAULT_RETENTION_DAYS);
      if (n > 0) log.info({ deleted: n }, 'job history cleaned up');
      await deleteFinishedQueuedJobs(sql);
    }),
    deliveriesSweep: sweepDeliveries(services),
    mailSchedule: mail.schedule,
    markdownRefresh: cronTask(crons.markdownRefresh, services, async ({ sql, log }) => {
      const n = await refreshStoredHtml(sql);
      if (n > 0) log.info({ rendered: n }, 'stored markdown html rendered');
    }),
  };
  const byName = (decls: Record<string, { task: string }>, tasks: Record<string, Task>) =>
    Object.entries(tasks).map(([k, task]) => [decls[k]!.task, task] as const);
  return Object.fromEntries([...byName(jobs, forJobs), ...byName(crons, forCrons)]);
}
