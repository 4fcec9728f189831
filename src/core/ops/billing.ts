import { z } from 'zod';
import { startRun, type RunPreview } from '../billing/start.ts';
import { getRun } from '../billing/list.ts';
import { advanceRun } from '../billing/advance.ts';
import { renderJob } from '../jobs/catalog.ts';
import type { BillingRun } from '../billing/present.ts';
import { voidRun } from '../billing/void.ts';
import { approveRun } from '../billing/approve.ts';
import { resendDelivery } from '../documents/resend.ts';
import { conflict, notFound } from '../errors.ts';
import { defineOp, runOp } from '../operation.ts';
import { idField } from '../validation.ts';

/** A delivery as the console shows it: the contract's entry with its id and attempts. */
export interface OpsDelivery {
  id: string;
  /** The timesheet email, or the notice that its run was voided (issue 23). */
  kind: 'timesheet' | 'void_notice';
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
export const runDocuments = defineOp({
  name: 'ops.billing.run_documents',
  action: 'ops.read',
  input: runIdInput,
  output: null,
  run: async (ctx, { runId }): Promise<{ run: BillingRun; documents: OpsDocument[] }> => {
    const run = await runOp(getRun, ctx, { id: runId });
    const documents = await ctx.sql<OpsDocument[]>`
      select d.id, d.number, c.name as "clientName", pr.name as "projectName", d.format, d.version, d.voided, d.redacted,
             d.checksum, d.bytes, d.created_at as "createdAt",
             (select h.duration_ms from job_history h
              where h.timesheet_id = d.timesheet_id and h.task = ${renderJob.task} and h.outcome = 'succeeded'
              order by h.id desc limit 1) as "renderMs",
             coalesce((select json_agg(json_build_object('id', dd.id, 'kind', dd.kind, 'email', dd.email, 'state', dd.state, 'detail', dd.detail,
                                                         'attempts', dd.attempts, 'attemptedAt', dd.attempted_at) order by dd.created_at, dd.id)
                       from document_deliveries dd where dd.timesheet_id = d.timesheet_id), '[]'::json) as deliveries
      from documents d
      join clients c on c.id = d.client_id
      left join projects pr on pr.id = d.project_id
      where d.run_id = ${runId} and d.workspace_id = ${ctx.principal.workspaceId}
      order by d.number, d.version desc, d.format`;
    for (const d of documents) for (const x of d.deliveries) x.attemptedAt = x.attemptedAt ? new Date(x.attemptedAt) : null;
    return { run, documents: [...documents] };
  },
});

/**
 * "Start the run" from the console, once the operator saw the preview (the preview itself is the
 * billing operation's dry run, which the page reads): the billing operation, asked as an operator
 * action (`ops.act`) and audited, refusals too (a REST start is not).
 */
export const opsStartRun = defineOp({
  name: 'ops.billing.run.start',
  action: 'ops.act',
  input: z.object({ periodId: idField('The closed period to bill (uuid).') }),
  output: null,
  audit: {
    action: 'billing.run.start',
    target: (s) => `period ${String(s.periodId)}`,
    detail: (_, r: BillingRun | RunPreview) => (r.dryRun ? null : `run ${r.id}`),
  },
  run: (ctx, { periodId }) => runOp(startRun, ctx, { periodId }),
});

/**
 * Void from the console: an admin re-authenticated in the last ten minutes (`ops.destroy`). The
 * billing operation's own record is this one (one row per action: its audit is not repeated
 * inside), so a refusal for want of a re-authentication is recorded under the void. The typed
 * confirmation and the password prompt are the console's (src/ops/pages/billing.ts).
 */
export const opsVoidRun = defineOp({
  name: 'ops.billing.run.void',
  action: 'ops.destroy',
  input: z.object({ runId: idField('The billing run (uuid).'), reason: z.string().describe('Why the run is voided.') }),
  output: null,
  audit: { action: 'billing.run.void', target: (s) => `run ${String(s.runId)}` },
  run: (ctx, { runId, reason }) => runOp(voidRun, ctx, { id: runId, reason }),
});

/**
 * Approve from the console (issue 23), once the operator read the documents: the billing
 * operation, as an operator action (`ops.act`); recorded once, as `billing.run.approve`. The typed
 * confirmation is the console's (src/ops/pages/billing.ts).
 */
export const opsApproveRun = defineOp({
  name: 'ops.billing.run.approve',
  action: 'ops.act',
  input: runIdInput,
  output: null,
  audit: { action: 'billing.run.approve', target: (s) => `run ${String(s.runId)}` },
  run: (ctx, { runId }) => runOp(approveRun, ctx, { id: runId }),
});

const deliveryInput = z.object({ deliveryId: idField('The delivery (uuid).') });

/**
 * Resend a failed or unknown delivery (the operator's explicit decision), found by its id alone,
 * through the documents' own rule; recorded once, as that rule's `delivery.resend`.
 */
export const opsResendDelivery = defineOp({
  name: 'ops.delivery.resend',
  action: 'ops.act',
  input: deliveryInput,
  output: null,
  audit: { action: 'delivery.resend', target: (s) => `delivery ${String(s.deliveryId)}` },
  run: async (ctx, { deliveryId }): Promise<void> => {
    const [d] = await ctx.sql<{ documentId: string }[]>`
      select d.id as "documentId" from document_deliveries dd join documents d on d.timesheet_id = dd.timesheet_id
      where dd.id = ${deliveryId} and dd.workspace_id = ${ctx.principal.workspaceId} limit 1`;
    if (!d) throw notFound('unknown_delivery', undefined, 'No such delivery.');
    await runOp(resendDelivery, ctx, { id: d.documentId, deliveryId });
  },
});

/**
 * An `unknown` delivery the operator knows arrived (the client confirmed it): `sent`, with who
 * decided in its detail, and the run settles as if the job had seen the answer.
 */
export const markDeliverySent = defineOp({
  name: 'ops.delivery.mark_sent',
  action: 'ops.act',
  input: deliveryInput,
  output: null,
  tx: true,
  audit: { action: 'delivery.mark_sent', target: (s) => `delivery ${String(s.deliveryId)}` },
  run: async (ctx, { deliveryId }): Promise<void> => {
    const { sql, principal: p } = ctx;
    const [d] = await sql<{ state: string; kind: string; runId: string; runStatus: string }[]>`
      select dd.state, dd.kind, s.run_id as "runId", r.status as "runStatus"
      from document_deliveries dd join timesheets s on s.id = dd.timesheet_id join billing_runs r on r.id = s.run_id
      where dd.id = ${deliveryId} and dd.workspace_id = ${p.workspaceId} for update of dd`;
    if (!d) throw notFound('unknown_delivery', undefined, 'No such delivery.');
    if (d.state !== 'unknown') throw conflict('delivery_not_unknown', { state: d.state }, 'Only a delivery whose outcome is unknown can be marked sent.');
    // a void notice belongs to a voided run; a timesheet email of one is history
    if (d.runStatus === 'voided' && d.kind === 'timesheet') throw conflict('run_voided', undefined, 'The billing run was voided; its deliveries are history.');
    const now = ctx.now();
    await sql`
      insert into delivery_resends (delivery_id, previous_state, previous_detail, requested_by, requested_at)
      select id, state, detail, ${p.identityId}, ${now} from document_deliveries where id = ${deliveryId}`;
    await sql`
      update document_deliveries set state = 'sent', detail = ${`Marked as sent by ${p.name}`}, sending_at = null, updated_at = ${now}
      where id = ${deliveryId}`;
    await advanceRun(sql, d.runId, now);
  },
});
