import type { Task } from 'graphile-worker';
import { allocateRun } from '../core/billing/allocate.ts';
import { deliverAndNotify } from '../core/documents/deliver-task.ts';
import { renderDocument } from '../core/documents/render-document.ts';
import { settleAbandonedDeliveries } from '../core/documents/abandoned-deliveries.ts';
import { allocateJob, crons, deliverJob, renderJob } from '../core/jobs/catalog.ts';
import { cronTask, jobTask, type JobServices } from './declared.ts';

/**
 * The billing jobs: each calls one core operation with the job's checked payload; what a last
 * failed attempt leaves (a failed run, a settled delivery) is declared with the job in the core.
 */
export function billingTasks(services: JobServices) {
  return {
    allocate: jobTask(allocateJob, services, allocateRun),
    render: jobTask(renderJob, services, renderDocument),
    deliver: jobTask(deliverJob, services, deliverAndNotify),
  } satisfies Record<string, Task>;
}

/** Settles deliveries whose job can no longer run (a worker killed during the last attempt). */
export const sweepDeliveries = (services: JobServices): Task =>
  cronTask(crons.deliveriesSweep, services, async (ctx) => {
    const n = await settleAbandonedDeliveries(ctx.sql, ctx.now());
    if (n > 0) ctx.log.warn({ settled: n }, 'deliveries whose job could not run again were settled');
  });
