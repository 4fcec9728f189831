import { conflict, notFound } from '../errors.ts';
import { defineOp } from '../operation.ts';
import { idField, withReasons } from '../validation.ts';
import { z } from 'zod';
import { advanceRun } from './advance.ts';
import { lockBilling } from './lock.ts';
import { presentRun, type BillingRun } from './present.ts';
import { createDeliveries } from './progress.ts';
import { billingRunSchema } from './run-schema.ts';

const approveRunInput = withReasons(z.object({ id: idField('The billing run (uuid).') }), { id: 'bad_uuid' });

/**
 * POST /billing/runs/{id}/approve (issue 23): Owner/Admin from a browser session, once they have
 * read the run's documents. A run whose timesheets are held for review (their client's delivery
 * is `review`) waits at `awaiting_approval` after rendering; approving it records who and when,
 * creates the held timesheets' deliveries (one email per billing recipient, queued in this
 * transaction) and opens the documents to the client's users; the run moves on to `delivering`.
 * Refusals: 404 `unknown_run`; 409 `run_voided`; 409 `run_not_awaiting_approval` (with its
 * `status`: still allocating or rendering, or nothing held, or approved already). Audited
 * (`billing.run.approve`), refusals too.
 */
export const approveRun = defineOp({
  name: 'billing.runs.approve',
  action: 'billing.runs.approve',
  input: approveRunInput,
  output: billingRunSchema,
  tx: true,
  audit: { action: 'billing.run.approve', target: (sent) => `run ${String(sent.id)}` },
  run: async (ctx, { id: runId }): Promise<BillingRun> => {
    const { sql, principal: p } = ctx;
    await lockBilling(sql, p.workspaceId);
    const [run] = await sql<{ status: string }[]>`
      select status from billing_runs where id = ${runId} and workspace_id = ${p.workspaceId} for no key update`;
    if (!run) throw notFound('unknown_run', undefined, 'No such billing run.');
    if (run.status === 'voided') throw conflict('run_voided', undefined, 'This run is voided.');
    if (run.status !== 'awaiting_approval') {
      throw conflict('run_not_awaiting_approval', { status: run.status }, `This run is ${run.status}, not awaiting approval.`);
    }
    const now = ctx.now();
    await sql`update billing_runs set approved_at = ${now}, approved_by = ${p.identityId} where id = ${runId}`;
    const held = await sql<{ id: string }[]>`
      select id from timesheets where run_id = ${runId} and version = 1 and review order by number`;
    for (const sheet of held) await createDeliveries(sql, sheet.id, now);
    await advanceRun(sql, runId, now);
    return presentRun(sql, p.workspaceId, runId);
  },
});
