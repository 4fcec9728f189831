import { z } from 'zod';
import { authorize } from '../access/authorize.ts';
import { idField, withReasons } from '../validation.ts';
import { visibleTicket } from '../access/visible.ts';
import { defineOp } from '../operation.ts';
import { okSchema } from '../response-schema.ts';
import { notFound } from '../errors.ts';
import { recordEvents } from '../tickets/events.ts';
import { loadTicket } from '../tickets/load.ts';
import { ticketRef } from '../tickets/schemas.ts';

export const removeLinkInput = withReasons(z.object({ ref: ticketRef, linkId: idField('Link id.') }), { linkId: 'bad_uuid' });

/**
 * DELETE /tickets/{ref}/links/{linkId}. Needs edit rights on the ticket. The link must touch
 * this ticket (as source or target) and its other end must be visible too, else 404; a removal
 * is recorded on both tickets.
 */
export const removeLink = defineOp({
  name: 'links.remove',
  action: 'links.remove',
  input: removeLinkInput,
  output: okSchema,
  tx: true,
  run: async (ctx, { ref, linkId }): Promise<{ ok: true }> => {
    const { sql, principal: p } = ctx;
    const t = await loadTicket(ctx, ref);
    authorize(ctx, 'links.remove', t);
    const [link] = await sql<{ id: string; kind: string; sourceId: string; targetId: string }[]>`
      select l.id, l.kind, l.source_id as "sourceId", l.target_id as "targetId"
      from ticket_links l
      join tickets o on o.id = case when l.source_id = ${t.id} then l.target_id else l.source_id end
      where l.id = ${linkId} and (l.source_id = ${t.id} or l.target_id = ${t.id}) and ${visibleTicket(sql, p, 'o')}
      for update of l`;
    if (!link) throw notFound('unknown_link', { field: 'linkId' }, 'No such link on this ticket.');
    await sql`delete from ticket_links where id = ${link.id}`;
    const payload = (direction: 'outgoing' | 'incoming', otherId: string) => ({ linkId: link.id, kind: link.kind, direction, otherId });
    await recordEvents(
      sql,
      [
        { workspaceId: p.workspaceId, ticketId: link.sourceId, kind: 'link_removed', actorId: p.identityId, payload: payload('outgoing', link.targetId) },
        { workspaceId: p.workspaceId, ticketId: link.targetId, kind: 'link_removed', actorId: p.identityId, payload: payload('incoming', link.sourceId) },
      ],
      ctx.now(),
    );
    return { ok: true };
  },
});
