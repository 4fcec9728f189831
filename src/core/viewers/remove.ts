import { authorize } from '../access/authorize.ts';
import { parseUuid } from '../validation.ts';
import { tx, type Ctx } from '../ctx.ts';
import { forbidden, notFound } from '../errors.ts';
import { recordEvent } from '../tickets/events.ts';
import { loadTicket } from '../tickets/load.ts';
import { canRemoveViewer } from '../tickets/permissions.ts';

/**
 * DELETE /tickets/{ref}/viewers/{identityId}. The reporter is never removable (403, even when
 * not stored as a viewer); someone who is not a viewer is 404; then `canRemoveViewer` decides:
 * anyone may remove themselves, others need `permissions.addViewers`.
 */
export async function removeViewer(ctx: Ctx, ref: string, rawIdentityId: string): Promise<{ ok: true }> {
  authorize(ctx, 'viewers.remove');
  const identityId = parseUuid(rawIdentityId, 'identityId');
  return tx(ctx, async (ctx) => {
    const { sql, principal: p } = ctx;
    const t = await loadTicket(ctx, ref);
    const isReporter = t.reporterId === identityId;
    if (isReporter) throw forbidden('reporter_not_removable', { identityId }, 'The reporter of a ticket cannot be removed from it.');
    const [viewer] = await sql`select 1 from ticket_viewers where ticket_id = ${t.id} and identity_id = ${identityId} for update`;
    if (!viewer) throw notFound('unknown_viewer', { identityId }, 'This person is not a viewer of the ticket.');
    if (!canRemoveViewer(p, authorize(ctx, 'viewers.remove', t), { identityId, isReporter })) {
      throw forbidden('remove_viewer_forbidden', { identityId }, 'You may not remove this viewer.');
    }
    await sql`delete from ticket_viewers where ticket_id = ${t.id} and identity_id = ${identityId}`;
    await recordEvent(sql, { workspaceId: p.workspaceId, ticketId: t.id, kind: 'viewer_removed', actorId: p.identityId, payload: { identityId } }, ctx.now());
    return { ok: true };
  });
}
