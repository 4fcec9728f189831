import type { JobHelpers, Task } from 'graphile-worker';
import { z } from 'zod';
import type { JobCtx } from '../core/jobs/ctx.ts';
import { isLastAttempt } from '../core/jobs/ctx.ts';
import type { CronDecl, JobDecl, WorkspacePayload } from '../core/jobs/define.ts';
import type { SecretBox } from '../core/mail/secret-box.ts';
import { JobHistory } from './history.ts';

/** What the worker process gives its tasks: everything of a JobCtx but the attempt, and the configuration they need. */
export type JobServices = Omit<JobCtx, 'attempt' | 'checkpoint'> & {
  /** The key that opens stored mailbox passwords (WT_SECRET_KEY or the embedded default's key file); none: polls record `secret_key_missing`. */
  secrets?: SecretBox | null;
  /** JOB_HISTORY_RETENTION_DAYS; 30 when not given (the configuration's default). */
  historyRetentionDays?: number;
  /**
   * Where attempts are recorded: startWorker gives its runners one that buffers rows and writes
   * them in batches (src/jobs/history.ts). Absent (a task run by itself, as tests do), each
   * attempt's row is written when it ends, before the task returns.
   */
  history?: JobHistory;
};

const historyOf = (services: JobServices) => services.history ?? new JobHistory(services.sql, services.log, { delayMs: 0 });

const ctxOf = (services: JobServices, helpers: JobHelpers): JobCtx => ({
  ...services,
  attempt: { number: helpers.job.attempts, max: helpers.job.max_attempts },
});

const namesWorkspace = z.object({ workspaceId: z.uuid() });

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * The worker's task for a declared job: the payload is checked by the job's schema here, once
 * (a payload that does not fit fails the attempt), the attempt is recorded in job_history under
 * the payload's workspace, and the handler gets the typed payload. When an attempt throws on the
 * job's last attempt, the declaration's `onLastAttemptFailed` runs (the core's rule: a failed run,
 * a settled delivery) before the error goes to graphile-worker.
 */
export function jobTask<S extends WorkspacePayload>(
  job: JobDecl<S>,
  services: JobServices,
  run: (ctx: JobCtx, payload: z.output<S>) => Promise<unknown>,
): Task {
  return async (raw, helpers) => {
    const parsed = job.payload.safeParse(raw);
    // a payload that does not fit still belongs to the workspace it names (its history stays that workspace's)
    const workspaceId = parsed.success ? parsed.data.workspaceId : (namesWorkspace.safeParse(raw).data?.workspaceId ?? null);
    const attempt = historyOf(services).attempt(helpers, raw, workspaceId);
    if (!parsed.success) {
      const err = new Error(`The ${job.task} payload does not fit its declaration: ${parsed.error.message}`);
      await attempt.finish('failed', err.message);
      throw err;
    }
    const ctx = ctxOf(services, helpers);
    let served: unknown;
    try {
      // a task may answer the objects it produced (a render: the document), recorded with its outcome
      served = await run(ctx, parsed.data);
    } catch (err) {
      if (job.onLastAttemptFailed && isLastAttempt(ctx)) {
        // the job's own error is what graphile-worker records; a hook that fails too (the database is gone) is logged
        await job
          .onLastAttemptFailed(ctx, parsed.data, message(err))
          .catch((hookErr: unknown) => services.log.warn({ err: hookErr, task: job.task }, 'the last failed attempt could not be recorded'));
      }
      await attempt.finish('failed', message(err));
      throw err;
    }
    await attempt.finish('succeeded', null, served);
  };
}

/** The worker's task for a declared crontab task: no payload (graphile-worker's `_cron` stamp aside), no workspace. */
export function cronTask(_cron: CronDecl, services: JobServices, run: (ctx: JobCtx) => Promise<void>): Task {
  return async (raw, helpers) => {
    const attempt = historyOf(services).attempt(helpers, raw, null);
    try {
      await run(ctxOf(services, helpers));
    } catch (err) {
      await attempt.finish('failed', message(err));
      throw err;
    }
    await attempt.finish('succeeded', null);
  };
}
