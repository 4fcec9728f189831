import type { JobHelpers, Task } from 'graphile-worker';
import { allocateRun } from '../core/billing/allocate.ts';
import { failRun } from '../core/billing/fail.ts';
import { deliverTimesheet } from '../core/documents/deliver.ts';
import { renderDocument } from '../core/documents/render-document.ts';
import type { JobCtx, JobRefs } from '../core/jobs/ctx.ts';

/** What the billing tasks share from the worker process: everything of a JobCtx but the attempt. */
export type JobServices = Omit<JobCtx, 'attempt' | 'checkpoint'>;

const ctxOf = (services: JobServices, helpers: JobHelpers): JobCtx => ({
  ...services,
  attempt: { number: helpers.job.attempts, max: helpers.job.max_attempts },
});

/**
 * A task that calls one core operation with the job's payload (checked there). When the last
 * attempt of an allocation or a render fails, its run is marked `failed` with the error, so an
 * operator sees it instead of a run stuck `rendering`.
 */
function billingTask(services: JobServices, op: (ctx: JobCtx, payload: unknown) => Promise<JobRefs | void>, failsRun: boolean): Task {
  return (async (payload: unknown, helpers: JobHelpers) => {
    try {
      return await op(ctxOf(services, helpers), payload);
    } catch (err) {
      if (failsRun && helpers.job.attempts >= helpers.job.max_attempts) {
        await failRun(services.sql, payload, err instanceof Error ? err.message : String(err));
      }
      throw err;
    }
  }) as Task;
}

export function billingTasks(services: JobServices): Record<string, Task> {
  return {
    'billing:allocate': billingTask(services, allocateRun, true),
    'documents:render': billingTask(services, renderDocument, true),
    'documents:deliver': billingTask(services, deliverTimesheet, false),
  };
}
