import { createVoidNotices } from '../billing/progress.ts';
import { jobTx, type JobCtx, type JobRefs } from '../jobs/ctx.ts';
import { deliverTimesheet } from './deliver.ts';

/**
 * What the `documents:deliver` job runs: the delivery (deliver.ts), then, when it sent a timesheet
 * email of a run that was voided while the email was under way (its delivery was still pending
 * when the void wrote the notices), the notice that recipient is owed. Apart from deliver.ts
 * because the notices' jobs come from the job catalog, which imports deliver.ts.
 */
export async function deliverAndNotify(ctx: JobCtx, payload: { deliveryId: string }): Promise<JobRefs> {
  const refs = await deliverTimesheet(ctx, payload);
  if (refs.runId) {
    const [voided] = await ctx.sql`select 1 from billing_runs where id = ${refs.runId} and status = 'voided'`;
    if (voided) await jobTx(ctx, (ctx) => createVoidNotices(ctx.sql, refs.runId!, ctx.now()));
  }
  return refs;
}
