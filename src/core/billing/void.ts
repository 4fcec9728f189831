import { z } from 'zod';
import { conflict, notFound } from '../errors.ts';
import { defineOp } from '../operation.ts';
import { idField, withReasons } from '../validation.ts';
import { lockBilling } from './lock.ts';
import { createVoidNotices } from './progress.ts';
import { presentRun, type BillingRun } from './present.ts';
import { billingRunSchema } from './run-schema.ts';

/** The body of POST /billing/runs/{id}/void. */
export const voidRunFields = z.object({
  reason: z.string().trim().min(3).max(500).describe('Why the run is voided (3-500 characters), kept with the run.'),
});
const voidRunInput = withReasons(voidRunFields.extend({ id: idField('The billing run (uuid).') }), { id: 'bad_uuid' });

/**
 * POST /billing/runs/{id}/void: Owner/Admin from a browser session. Atomically: the run becomes
 * `voided` (with who, when and why), its documents `voided: true` (they stay listed, numbers
 * kept), its lines stop being live (so bank draw-downs return) and every entry it billed is
 * unbilled, free for a later run. Deliveries stay as history; pending ones are skipped by their
 * job; each recipient who received a timesheet of the run (`sent`, or `unknown`: may have) gets a
 * notice naming the voided number (a `void_notice` delivery, issue 23). A run awaiting approval
 * sent nothing, so voiding it notifies no one. A run still allocating is 409 `run_allocating` (its entry set is not decided); a voided run
 * is 409 `run_voided`. Audited (`billing.run.void`, with the door it came through), refusals too.
 */
export const voidRun = defineOp({
  name: 'billing.runs.void',
  action: 'billing.runs.void',
  input: voidRunInput,
  output: billingRunSchema,
  tx: true,
  audit: { action: 'billing.run.void', target: (sent) => `run ${String(sent.id)}`, detail: (input) => `reason: ${input.reason}` },
  run: async (ctx, body): Promise<BillingRun> => {
    const { sql, principal: p } = ctx;
    const runId = body.id;
    await lockBilling(sql, p.workspaceId);
    const [run] = await sql<{ status: string }[]>`
      select status from billing_runs where id = ${runId} and workspace_id = ${p.workspaceId} for update`;
    if (!run) throw notFound('unknown_run', undefined, 'No such billing run.');
    if (run.status === 'voided') throw conflict('run_voided', undefined, 'This run is voided already.');
    if (run.status === 'allocating') throw conflict('run_allocating', undefined, 'This run is still allocating; void it once it has.');
    const now = ctx.now();
    await sql`
      update billing_runs set status = 'voided', voided_at = ${now}, voided_by = ${p.identityId}, void_reason = ${body.reason}
      where id = ${runId}`;
    await sql`update documents set voided = true where run_id = ${runId}`;
    await sql`update billing_run_entries set active = false where run_id = ${runId}`;
    await sql`update time_entries set billed = false, billing_run_id = null, updated_at = ${now} where billing_run_id = ${runId}`;
    await createVoidNotices(sql, runId, now);
    return presentRun(sql, p.workspaceId, runId);
  },
});
