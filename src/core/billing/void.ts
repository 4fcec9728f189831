import { z } from 'zod';
import { authorize } from '../access/authorize.ts';
import { tx, type Ctx } from '../ctx.ts';
import { conflict, notFound } from '../errors.ts';
import { audited } from '../ops/audit.ts';
import { parseUuid } from '../validation.ts';
import { lockBilling } from './lock.ts';
import { presentRun, type BillingRun } from './present.ts';

export const voidRunInput = z.object({
  runId: z.string(),
  reason: z.string().trim().min(3).max(500).describe('Why the run is voided (3-500 characters), kept with the run.'),
});

/**
 * POST /billing/runs/{id}/void: Owner/Admin from a browser session. Atomically: the run becomes
 * `voided` (with who, when and why), its documents `voided: true` (they stay listed, numbers
 * kept), its lines stop being live (so bank draw-downs return) and every entry it billed is
 * unbilled, free for a later run. Deliveries stay as history; pending ones are skipped by their
 * job. A run still allocating is 409 `run_allocating` (its entry set is not decided); a voided run
 * is 409 `run_voided`. Audited (`billing.run.void`, with the door it came through), refusals too.
 */
export async function voidRun(ctx: Ctx, input: unknown): Promise<BillingRun> {
  const raw = (input ?? {}) as { runId?: unknown; reason?: unknown };
  return audited(
    ctx,
    'billing.run.void',
    `run ${String(raw.runId)}`,
    (ctx) => voidAudited(ctx, raw),
    () => `reason: ${String(raw.reason)}`,
  );
}

async function voidAudited(ctx: Ctx, raw: { runId?: unknown }): Promise<BillingRun> {
  authorize(ctx, 'billing.runs.void');
  const runId = parseUuid(raw.runId, 'id');
  const body = voidRunInput.parse(raw);
  return tx(ctx, async (ctx) => {
    const { sql, principal: p } = ctx;
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
    return presentRun(sql, p.workspaceId, runId);
  });
}
