import { z } from 'zod';
import { authorize } from '../access/authorize.ts';
import { defineOp } from '../operation.ts';
import { okSchema } from '../response-schema.ts';
import { forbidden, notFound } from '../errors.ts';
import { recordEvent } from '../tickets/events.ts';
import { loadTicket } from '../tickets/load.ts';
import { ticketRef } from '../tickets/schemas.ts';
import { idField, withReasons } from '../validation.ts';

export const removeViewerInput = withReasons(z.object({ ref: ticketRef, identityId: idField('Identity id of the viewer to remove.') }), {
  identityId: 'bad_uuid',
});

/**
 * DELETE /tickets/{ref}/viewers/{identityId}. The reporter is never removable (403, even when
 * not stored as a viewer); someone who is not a viewer is 404; then the `viewers.remove` rule
 * decides (SUBJECT_PERMISSIONS.removeViewer): anyone may remove themselves, others need
 * `permissions.addViewers`.
 */
export const removeViewer = defineOp({
  name: 'viewers.remove',
  action: 'viewers.remove',
  input: removeViewerInput,
  output: okSchema,
  tx: true,
  run: async (ctx, { ref, identityId }): Promise<{ ok: true }> => {
    const { sql, principal: p } = ctx;
    const t = await loadTicket(ctx, ref);
    if (t.reporterId === identityId) throw forbidden('reporter_not_removable', { identityId }, 'The reporter of a ticket cannot be removed from it.');
    const [viewer] = await sql`select 1 from ticket_viewers where ticket_id = ${t.id} and identity_id = ${identityId} for update`;
    if (!viewer) throw notFound('unknown_viewer', { identityId }, 'This person is not a viewer of the ticket.');
    authorize(ctx, 'viewers.remove', t, { viewer: identityId });
    await sql`delete from ticket_viewers where ticket_id = ${t.id} and identity_id = ${identityId}`;
    await recordEvent(sql, { workspaceId: p.workspaceId, ticketId: t.id, kind: 'viewer_removed', actorId: p.identityId, payload: { identityId } }, ctx.now());
    return { ok: true };
  },
});
