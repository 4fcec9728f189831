import { z } from 'zod';
import { authorize } from '../access/authorize.ts';
import { idField, withReasons } from '../validation.ts';
import { defineOp } from '../operation.ts';
import { reattributedSchema } from './schema.ts';
import { recordEvent } from '../tickets/events.ts';
import { loadTicket } from '../tickets/load.ts';

/** The ticket is `id` (a UUID), as in the path. */
const reattributeTicketTimeInput = withReasons(z.object({ id: idField('The ticket UUID.') }), { id: 'bad_uuid' });

/**
 * POST /time/tickets/{id}/reattribute (browser session; Owner or Admin): points every unbilled
 * entry on the ticket that is outside a correction chain (neither a correction nor corrected)
 * at the ticket's current billing client. Entries of closed periods are included: attribution
 * is not a work fact. Billed entries and correction chains keep their client.
 */
export const reattributeTicketTime = defineOp({
  name: 'time.reattribute',
  action: 'time.reattribute',
  input: reattributeTicketTimeInput,
  output: reattributedSchema,
  tx: true,
  run: async (ctx, { id: ticketId }): Promise<{ updated: number }> => {
    const { sql, principal: p } = ctx;
    // A hidden ticket is 404 before any role check (the contract's first rule).
    const ticket = await loadTicket(ctx, ticketId, { lock: true });
    authorize(ctx, 'time.reattribute', ticket);
    const now = ctx.now();
    const rows = await sql`
      update time_entries e set billing_client_id = ${ticket.billingClientId}, updated_at = ${now}
      where e.id in (
        select x.id from time_entries x
        where x.ticket_id = ${ticket.id} and not x.billed and x.corrects_entry_id is null
          and x.billing_client_id is distinct from ${ticket.billingClientId}::uuid
          and not exists (select 1 from time_entries c where c.corrects_entry_id = x.id)
        for update)
      returning e.id`;
    if (rows.length > 0) {
      await recordEvent(
        sql,
        {
          workspaceId: p.workspaceId,
          ticketId: ticket.id,
          kind: 'time_reattributed',
          actorId: p.identityId,
          payload: { billingClientId: ticket.billingClientId, updated: rows.length },
        },
        now,
      );
    }
    return { updated: rows.length };
  },
});
