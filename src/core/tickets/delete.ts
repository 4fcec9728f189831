import type { Db } from '../../db/connect.ts';
import { authorize } from '../access/authorize.ts';
import { defineOp } from '../operation.ts';
import { okSchema } from '../response-schema.ts';
import { assertTicketTimeUnlocked } from '../time/locked.ts';
import { recordEvents, type NewEvent } from './events.ts';
import { loadTicket } from './load.ts';
import { deleteTicketInput } from './schemas.ts';

/**
 * DELETE /tickets/{ref}: Owner or Admin, from a browser session re-authenticated within ten
 * minutes. Refused while time on the ticket is billed or in a closed period (redact instead).
 * Comments, attachments, viewers, links, refs and open-period time go with the ticket (cascade);
 * children become top-level. The other ends of its links and its children get a timeline event,
 * so pollers see that they changed; the ticket itself leaves the change feed as `deleted`.
 * A ticket the caller cannot see is 404 before any role check: the contract's "hidden is always 404".
 */
export const deleteTicket = defineOp({
  name: 'tickets.delete',
  action: 'tickets.delete',
  input: deleteTicketInput,
  output: okSchema,
  tx: true,
  run: async (ctx, { ref }): Promise<{ ok: true }> => {
    const { sql, principal: p } = ctx;
    const t = await loadTicket(ctx, ref, { lock: true });
    authorize(ctx, 'tickets.delete', t);
    await assertNoLockedTime(sql, t.id);
    // `for no key update`, not `for update`: it is all clearing parent_id needs, and it does not
    // conflict with the key-share hold a writer has on a child (concurrency.ts holdTickets).
    const children = await sql<{ id: string }[]>`select id from tickets where parent_id = ${t.id} for no key update`;
    const links = await sql<{ id: string; kind: string; otherId: string; direction: 'incoming' | 'outgoing' }[]>`
      select id, kind, case when source_id = ${t.id} then target_id else source_id end as "otherId",
             case when source_id = ${t.id} then 'incoming' else 'outgoing' end as direction
      from ticket_links where source_id = ${t.id} or target_id = ${t.id}`;
    await sql`delete from tickets where id = ${t.id}`;
    const events: NewEvent[] = [
      ...children.map((c): NewEvent => ({
        workspaceId: t.workspaceId,
        ticketId: c.id,
        kind: 'parent_changed',
        actorId: p.identityId,
        payload: { old: t.id, new: null },
      })),
      ...links.map((l): NewEvent => ({
        workspaceId: t.workspaceId,
        ticketId: l.otherId,
        kind: 'link_removed',
        actorId: p.identityId,
        payload: { linkId: l.id, kind: l.kind, direction: l.direction, otherId: t.id },
      })),
    ];
    await recordEvents(sql, events, ctx.now());
    return { ok: true };
  },
});

/**
 * Refuses the delete when time on the ticket is billed (409 `ticket_billed`) or lies in a closed
 * period (409 `period_closed`). The rule lives with time tracking (src/core/time/locked.ts).
 */
export async function assertNoLockedTime(sql: Db, ticketId: string): Promise<void> {
  await assertTicketTimeUnlocked(sql, ticketId);
}
