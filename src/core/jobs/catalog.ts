import { z } from 'zod';
import { failRun } from '../billing/fail.ts';
import { deliveryAttemptFailed } from '../documents/deliver.ts';
import { settleStopped } from '../documents/stopped-deliveries.ts';
import { defineCron, defineJob, type CronDecl } from './define.ts';

/**
 * Every job and every crontab task, declared once: enqueue takes these objects (never a task
 * name), the worker registers a handler for each (src/jobs), the crontab and the console's "run
 * now" are built from `crons`. A task name appears in src only here (test/job-catalog.test.ts).
 */

const workspaceId = z.uuid();

/** `billing:allocate`: decides a run's entry set and timesheets (src/core/billing/allocate.ts). */
export const allocateJob = defineJob({
  task: 'billing:allocate',
  payload: z.object({ workspaceId, runId: z.uuid() }),
  maxAttempts: 5,
  key: (p) => `billing:allocate:${p.runId}`,
  // the run is `failed` with the error, not left `allocating`
  onLastAttemptFailed: (ctx, p, error) => failRun(ctx.sql, { runId: p.runId }, error),
  onCancelled: (sql, p, why) => failRun(sql, { runId: p.runId }, why),
});

/** `documents:render`: one document of a timesheet in one format (src/core/documents/render-document.ts). */
export const renderJob = defineJob({
  task: 'documents:render',
  payload: z.object({ workspaceId, timesheetId: z.uuid(), format: z.enum(['html', 'csv', 'pdf']) }),
  maxAttempts: 5,
  key: (p) => `documents:render:${p.timesheetId}:${p.format}`,
  // the run is `failed` with the error, not left `rendering`
  onLastAttemptFailed: (ctx, p, error) => failRun(ctx.sql, { timesheetId: p.timesheetId }, error),
  onCancelled: (sql, p, why) => failRun(sql, { timesheetId: p.timesheetId }, why),
});

/** `documents:deliver`: one timesheet email to one recipient (src/core/documents/deliver.ts). */
export const deliverJob = defineJob({
  task: 'documents:deliver',
  payload: z.object({ workspaceId, deliveryId: z.uuid() }),
  maxAttempts: 5,
  key: (p) => `documents:deliver:${p.deliveryId}`,
  // settled at once by how far the attempt got, rather than by deliveries:sweep
  onLastAttemptFailed: (ctx, p, error) => deliveryAttemptFailed(ctx, p, error),
  onCancelled: async (sql, p, why, now) => void (await settleStopped(sql, p.deliveryId, why, now)),
});

/**
 * `mail:poll`: reads one mailbox (src/core/mail/intake/poll.ts). One attempt: the poll records
 * its own failure (lastError) and the next minute's is the retry; one queue per mailbox, so its
 * polls run one at a time whichever worker takes them.
 */
export const pollJob = defineJob({
  task: 'mail:poll',
  payload: z.object({ workspaceId, mailboxId: z.uuid() }),
  maxAttempts: 1,
  key: (p) => `mail:poll:${p.mailboxId}`,
  queue: (p) => `mailbox:${p.mailboxId}`,
});

/**
 * `invitations:send`: the email of one invitation (src/core/people/invitation-email.ts). Its
 * link's secret is made by the job, so no secret sits in a payload; a resend queues it afresh.
 */
export const invitationMailJob = defineJob({
  task: 'invitations:send',
  payload: z.object({ workspaceId, invitationId: z.uuid() }),
  maxAttempts: 5,
  key: (p) => `invitations:send:${p.invitationId}`,
});

/** `resets:send`: the email of one password reset link (src/core/auth/password-reset-email.ts), made the same way. */
export const resetMailJob = defineJob({
  task: 'resets:send',
  payload: z.object({ workspaceId, resetId: z.uuid() }),
  maxAttempts: 5,
  key: (p) => `resets:send:${p.resetId}`,
});

/** Every job with a payload, by name: the worker must register a handler for each. */
export const jobs = {
  allocate: allocateJob,
  render: renderJob,
  deliver: deliverJob,
  poll: pollJob,
  invitationMail: invitationMailJob,
  resetMail: resetMailJob,
} as const;

/**
 * The crontab. graphile-worker schedules each tick once however many workers run it; task names
 * use a colon because its crontab refuses dots.
 */
export const crons = {
  /** Browser sessions that expired more than a day ago (src/core/auth/sessions.ts). */
  sessionsCleanup: defineCron({ task: 'sessions:cleanup', schedule: '17 * * * *' }),
  /** Rate-limit counters and idempotency keys past their time. */
  limitsCleanup: defineCron({ task: 'limits:cleanup', schedule: '*/10 * * * *' }),
  /** job_history past its retention, and queued_jobs rows of jobs that are gone (src/core/jobs/retention.ts). */
  historyCleanup: defineCron({ task: 'history:cleanup', schedule: '41 * * * *' }),
  /** A delivery whose job died on its last attempt is settled within about 1.5 minutes (30 s liveness + the next tick). */
  deliveriesSweep: defineCron({ task: 'deliveries:sweep', schedule: '* * * * *' }),
  /** A `mail:poll` for every enabled mailbox, every minute. */
  mailSchedule: defineCron({ task: 'mail:schedule', schedule: '* * * * *' }),
  /** The stored HTML of comments and descriptions no writer rendered with the current renderer (src/core/tickets/markdown-refresh.ts). */
  markdownRefresh: defineCron({ task: 'markdown:refresh', schedule: '*/5 * * * *' }),
} as const satisfies Record<string, CronDecl>;

/** The crontab text graphile-worker reads, one line per declared cron task. */
export const crontab = Object.values(crons)
  .map((c) => `${c.schedule} ${c.task}`)
  .join('\n');

/** The crontab task with this name, if there is one. */
export const cronNamed = (task: string): CronDecl | undefined => Object.values(crons).find((c) => c.task === task);
