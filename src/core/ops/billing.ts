import { z } from 'zod';
import { authorize } from '../access/authorize.ts';
import { startRun, type RunPreview } from '../billing/start.ts';
import { getRun } from '../billing/list.ts';
import { advanceRun } from '../billing/advance.ts';
import { renderJob } from '../jobs/catalog.ts';
import type { BillingRun } from '../billing/present.ts';
import { voidRun } from '../billing/void.ts';
import { tx, type Ctx } from '../ctx.ts';
import { resendDelivery } from '../documents/resend.ts';
import { conflict, notFound } from '../errors.ts';
import { idField, parseInput } from '../validation.ts';
import { audited } from './audit.ts';

/** A delivery as the console shows it: the contract's entry with its id and attempts. */
export interface OpsDelivery {
  id: string;
  email: string | null;
  state: 'pending' | 'sent' | 'failed' | 'skipped' | 'unknown';
  detail: string | null;
  attempts: number;
  attemptedAt: Date | null;
}

/** One document of a run with what an operator checks: flags, checksum, size, render time, deliveries. */
export interface OpsDocument {
  id: string;
  number: string;
  clientName: string;
  projectName: string | null;
  format: string;
  version: number;
  voided: boolean;
  redacted: boolean;
  checksum: string;
  bytes: number;
  renderMs: number | null;
  createdAt: Date;
  deliveries: OpsDelivery[];
}

const runIdInput = z.object({ runId: idField('The billing run (uuid).') });

/** A run and its documents (current and superseded), each with its deliveries. */
export async function runDocuments(ctx: Ctx, raw: unknown): Promise<{ run: BillingRun; documents: OpsDocument[] }> {
  authorize(ctx, 'ops.read');
  const { runId } = parseInput(runIdInput, raw);
  const run = await getRun(ctx, { runId });
  const documents = await ctx.sql<OpsDocument[]>`
    select d.id, d.number, c.name as "clientName", pr.name as "projectName", d.format, d.version, d.voided, d.redacted,
           d.checksum, d.bytes, d.created_at as "createdAt",
           (select h.duration_ms from job_history h
            where h.timesheet_id = d.timesheet_id and h.task = ${renderJob.task} and h.outcome = 'succeeded'
            order by h.id desc limit 1) as "renderMs",
           coalesce((select json_agg(json_build_object('id', dd.id, 'email', dd.email, 'state', dd.state, 'detail', dd.detail,
                                                       'attempts', dd.attempts, 'attemptedAt', dd.attempted_at) order by dd.created_at, dd.id)
                     from document_deliveries dd where dd.timesheet_id = d.timesheet_id), '[]'::json) as deliveries
    from documents d
    join clients c on c.id = d.client_id
    left join projects pr on pr.id = d.project_id
    where d.run_id = ${runId} and d.workspace_id = ${ctx.principal.workspaceId}
    order by d.number, d.version desc, d.format`;
  for (const d of documents) for (const x of d.deliveries) x.attemptedAt = x.attemptedAt ? new Date(x.attemptedAt) : null;
  return { run, documents: [...documents] };
}

export const startRunFormInput = z.object({
  periodId: idField('The closed period to bill (uuid).'),
  confirm: z.enum(['preview', 'start']).describe('preview: the dry run only; start: create the run.'),
});

/** "New run": the dry-run preview, or the run itself once the operator confirmed the preview. */
export async function opsStartRun(ctx: Ctx, raw: unknown): Promise<BillingRun | RunPreview> {
  const q = parseInput(startRunFormInput, raw);
  if (q.confirm === 'preview') return startRun(ctx, { periodId: q.periodId, dryRun: true });
  return audited(
    ctx,
    'billing.run.start',
    `period ${q.periodId}`,
    () => (authorize(ctx, 'ops.act'), startRun(ctx, { periodId: q.periodId })),
    (r) => (r.dryRun ? null : `run ${r.id}`),
  );
}

export const voidRunFormInput = z.object({
  runId: idField('The billing run (uuid).'),
  reason: z.string().trim().min(3).max(500).describe('Why the run is voided.'),
  confirmation: z.string().trim().describe('The text the page asks to type: VOID.'),
});

/**
 * Void from the console: an admin re-authenticated in the last ten minutes, who typed VOID. The
 * core's void records itself; the console's own refusals (no re-authentication, the wrong word)
 * go into that same record.
 */
export async function opsVoidRun(ctx: Ctx, raw: unknown): Promise<BillingRun> {
  const runId = (raw as { runId?: unknown } | null)?.runId;
  return audited(ctx, 'billing.run.void', `run ${String(runId)}`, async (ctx) => {
    authorize(ctx, 'ops.destroy');
    const q = parseInput(voidRunFormInput, raw);
    if (q.confirmation !== 'VOID') throw conflict('confirmation_mismatch', undefined, 'Type VOID to confirm.');
    return voidRun(ctx, { runId: q.runId, reason: q.reason });
  });
}

const deliveryInput = z.object({ deliveryId: idField('The delivery (uuid).') });

/**
 * Resend a failed or unknown delivery (the operator's explicit decision), through the documents'
 * own rule, which records itself; the console's refusal and lookup go into that same record.
 */
export async function opsResendDelivery(ctx: Ctx, raw: unknown): Promise<void> {
  const { deliveryId } = parseInput(deliveryInput, raw);
  await audited(ctx, 'delivery.resend', `delivery ${deliveryId}`, async (ctx) => {
    authorize(ctx, 'ops.act');
    const [d] = await ctx.sql<{ documentId: string }[]>`
      select d.id as "documentId" from document_deliveries dd join documents d on d.timesheet_id = dd.timesheet_id
      where dd.id = ${deliveryId} and dd.workspace_id = ${ctx.principal.workspaceId} limit 1`;
    if (!d) throw notFound('unknown_delivery', undefined, 'No such delivery.');
    await resendDelivery(ctx, { documentId: d.documentId, deliveryId });
  });
}

/**
 * An `unknown` delivery the operator knows arrived (the client confirmed it): `sent`, with who
 * decided in its detail, and the run settles as if the job had seen the answer.
 */
export async function markDeliverySent(ctx: Ctx, raw: unknown): Promise<void> {
  const { deliveryId } = parseInput(deliveryInput, raw);
  await audited(ctx, 'delivery.mark_sent', `delivery ${deliveryId}`, () =>
    tx(ctx, async (ctx) => {
      authorize(ctx, 'ops.act');
      const { sql, principal: p } = ctx;
      const [d] = await sql<{ state: string; runId: string; runStatus: string }[]>`
        select dd.state, s.run_id as "runId", r.status as "runStatus"
        from document_deliveries dd join timesheets s on s.id = dd.timesheet_id join billing_runs r on r.id = s.run_id
        where dd.id = ${deliveryId} and dd.workspace_id = ${p.workspaceId} for update of dd`;
      if (!d) throw notFound('unknown_delivery', undefined, 'No such delivery.');
      if (d.state !== 'unknown') throw conflict('delivery_not_unknown', { state: d.state }, 'Only a delivery whose outcome is unknown can be marked sent.');
      if (d.runStatus === 'voided') throw conflict('run_voided', undefined, 'The billing run was voided; its deliveries are history.');
      const now = ctx.now();
      await sql`
        insert into delivery_resends (delivery_id, previous_state, previous_detail, requested_by, requested_at)
        select id, state, detail, ${p.identityId}, ${now} from document_deliveries where id = ${deliveryId}`;
      await sql`
        update document_deliveries set state = 'sent', detail = ${`Marked as sent by ${p.name}`}, sending_at = null, updated_at = ${now}
        where id = ${deliveryId}`;
      await advanceRun(sql, d.runId, now);
    }),
  );
}
