import { authorize } from '../access/authorize.ts';
import { defineOp } from '../operation.ts';
import { okSchema } from '../response-schema.ts';
import { recordEvent } from './events.ts';
import { loadTicket } from './load.ts';
import { archiveTicketInput } from './schemas.ts';

/**
 * POST /tickets/{ref}/archive (browser session): `archived: true` takes the ticket off boards,
 * `false` restores it. Owner, Admin or a full project member (`permissions.archive`); Inbox
 * tickets only Owner/Admin. Asking for the state the ticket is already in changes nothing and
 * writes no event.
 */
export const archiveTicket = defineOp({
  name: 'tickets.archive',
  action: 'tickets.archive',
  input: archiveTicketInput,
  output: okSchema,
  tx: true,
  run: async (ctx, input): Promise<{ ok: true }> => {
    const { sql, principal: p } = ctx;
    const t = await loadTicket(ctx, input.ref, { lock: true });
    authorize(ctx, 'tickets.archive', t);
    if (t.archived === input.archived) return { ok: true };
    await sql`update tickets set archived = ${input.archived} where id = ${t.id}`;
    await recordEvent(sql, { workspaceId: t.workspaceId, ticketId: t.id, kind: input.archived ? 'archived' : 'restored', actorId: p.identityId }, ctx.now());
    return { ok: true };
  },
});
