import type { JobHelpers, Task } from 'graphile-worker';
import { allocateRun } from '../core/billing/allocate.ts';
import { failRun } from '../core/billing/fail.ts';
import { deliverTimesheet, deliveryAttemptFailed } from '../core/documents/deliver.ts';
import { renderDocument } from '../core/documents/render-document.ts';
import { settleAbandonedDeliveries } from '../core/documents/stopped-deliveries.ts';
import { isLastAttempt, type JobCtx, type JobRefs } from '../core/jobs/ctx.ts';

/** What the billing tasks share from the worker process: everything of a JobCtx but the attempt. */
export type JobServices = Omit<JobCtx, 'attempt' | 'checkpoint'>;

const ctxOf = (services: JobServices, helpers: JobHelpers): JobCtx => ({
  ...services,
  attempt: { number: helpers.job.attempts, max: helpers.job.max_attempts },
});

type AttemptFailed = (ctx: JobCtx, payload: unknown, error: string) => Promise<void>;

/** When the last attempt of an allocation or a render fails, its run is `failed` with the error, not stuck `rendering`. */
const failsRun: AttemptFailed = (ctx, payload, error) => (isLastAttempt(ctx) ? failRun(ctx.sql, payload, error) : Promise.resolve());

/**
 * A task that calls one core operation with the job's payload (checked there), and the core's
 * `failed` hook with the job's attempt when an attempt throws (the core decides what a last
 * failed attempt leaves: a failed run, a settled delivery).
 */
function billingTask(services: JobServices, op: (ctx: JobCtx, payload: unknown) => Promise<JobRefs | void>, failed: AttemptFailed): Task {
  return (async (payload: unknown, helpers: JobHelpers) => {
    const ctx = ctxOf(services, helpers);
    try {
      return await op(ctx, payload);
    } catch (err) {
      // The job's own error is what graphile-worker records; a hook that fails too (the database is gone) is logged.
      await failed(ctx, payload, err instanceof Error ? err.message : String(err)).catch((hookErr: unknown) =>
        services.log.warn({ err: hookErr }, 'the last failed attempt could not be recorded'),
      );
      throw err;
    }
  }) as Task;
}

export function billingTasks(services: JobServices): Record<string, Task> {
  return {
    'billing:allocate': billingTask(services, allocateRun, failsRun),
    'documents:render': billingTask(services, renderDocument, failsRun),
    'documents:deliver': billingTask(services, deliverTimesheet, deliveryAttemptFailed),
    /** Cron: settles deliveries whose job can no longer run (a worker killed during the last attempt). */
    'deliveries:sweep': async () => {
      const n = await settleAbandonedDeliveries(services.sql, services.now());
      if (n > 0) services.log.warn({ settled: n }, 'deliveries whose job could not run again were settled');
    },
  };
}
