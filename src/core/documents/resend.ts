import { z } from 'zod';
import { enqueueDelivery } from '../billing/progress.ts';
import { conflict, notFound } from '../errors.ts';
import { defineOp } from '../operation.ts';
import { idField, withReasons } from '../validation.ts';
import { deliveryStateSchema, type DeliveryState } from './delivery-schema.ts';

export type { DeliveryState } from './delivery-schema.ts';

const resendInput = withReasons(z.object({ id: idField('The document (uuid).'), deliveryId: idField('The delivery (uuid).') }), {
  id: 'bad_uuid',
  deliveryId: 'bad_uuid',
});

/** Only these end states are an operator's to retry: `sent` and `skipped` are settled, `pending` is in flight. */
const RESENDABLE = ['failed', 'unknown'];

/**
 * POST /documents/{id}/deliveries/{deliveryId}/resend: Owner/Admin from a browser session. An
 * explicit operator decision to send a `failed` or `unknown` delivery again (for `unknown`,
 * accepting that the client may get the email twice), recorded in `delivery_resends` with the
 * state it replaces. The delivery goes back to `pending` (its attempts counted afresh), its job
 * is queued anew (replacing a job left out of attempts), and a completed run is `delivering`
 * again until the job settles it. An `unknown` delivery keeps its Message-ID, so a receiving
 * system that has the first copy can recognise the second as the same message; a `failed` one
 * never arrived and goes as a new email (a new Message-ID). The delivery must be one of the
 * document's timesheet (else 404); a voided run's timesheet emails are history (409 `run_voided`),
 * its void notices (issue 23) can be resent like any delivery.
 * Audited (`delivery.resend`, with the door it came through), refusals too.
 */
export const resendDelivery = defineOp({
  name: 'documents.resend',
  action: 'documents.resend',
  input: resendInput,
  output: deliveryStateSchema,
  tx: true,
  audit: { action: 'delivery.resend', target: (sent) => `delivery ${String(sent.deliveryId)}` },
  run: async (ctx, { id: documentId, deliveryId }): Promise<DeliveryState> => {
    const { sql, principal: p } = ctx;
    const now = ctx.now();
    const [doc] = await sql<{ timesheetId: string }[]>`
      select timesheet_id as "timesheetId" from documents where id = ${documentId} and workspace_id = ${p.workspaceId}`;
    if (!doc) throw notFound('unknown_document', undefined, 'No such document.');
    const [d] = await sql<{ state: string; kind: string; detail: string | null; runId: string; runStatus: string }[]>`
      select dd.state, dd.kind, dd.detail, s.run_id as "runId", r.status as "runStatus"
      from document_deliveries dd join timesheets s on s.id = dd.timesheet_id join billing_runs r on r.id = s.run_id
      where dd.id = ${deliveryId} and dd.timesheet_id = ${doc.timesheetId}
      for update of dd`;
    if (!d) throw notFound('unknown_delivery', undefined, 'No such delivery of this document.');
    if (!RESENDABLE.includes(d.state)) {
      throw conflict('delivery_not_resendable', { state: d.state }, 'Only a failed or unknown delivery can be resent.');
    }
    // a void notice is owed because the run was voided; a timesheet email of a voided run is history
    const notice = d.kind === 'void_notice';
    if (d.runStatus === 'voided' && !notice) throw conflict('run_voided', undefined, 'The billing run was voided; its deliveries are history.');
    await sql`
      insert into delivery_resends (delivery_id, previous_state, previous_detail, requested_by, requested_at)
      values (${deliveryId}, ${d.state}, ${d.detail}, ${p.identityId}, ${now})`;
    const [row] = await sql<DeliveryState[]>`
      update document_deliveries
      set state = 'pending', detail = null, message_id = case when state = 'unknown' then message_id end, sending_at = null,
          smtp_step = null, attempts = 0, updated_at = ${now}
      where id = ${deliveryId}
      returning id, kind, email, state, detail, to_char(attempted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "attemptedAt"`;
    await sql`update billing_runs set status = 'delivering', completed_at = null where id = ${d.runId} and status = 'completed'`;
    await enqueueDelivery(sql, { id: deliveryId, workspaceId: p.workspaceId }, true);
    return row!;
  },
});
