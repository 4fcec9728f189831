import { authorize } from '../access/authorize.ts';
import { tx, type Ctx } from '../ctx.ts';
import { recordEvent } from './events.ts';
import { loadTicket } from './load.ts';
import { parseInput } from '../validation.ts';
import { archiveTicketInput } from './schemas.ts';

/**
 * POST /tickets/{ref}/archive (browser session): `archived: true` takes the ticket off boards,
 * `false` restores it. Owner, Admin or a full project member (`permissions.archive`); Inbox
 * tickets only Owner/Admin. Asking for the state the ticket is already in changes nothing and
 * writes no event.
 */
export async function archiveTicket(ctx: Ctx, raw: unknown): Promise<{ ok: true }> {
  authorize(ctx, 'tickets.archive');
  const input = parseInput(archiveTicketInput, raw);
  return tx(ctx, async (ctx) => {
    const { sql, principal: p } = ctx;
    const t = await loadTicket(ctx, input.ref, { lock: true });
    authorize(ctx, 'tickets.archive', t);
    if (t.archived === input.archived) return { ok: true };
    await sql`update tickets set archived = ${input.archived} where id = ${t.id}`;
    await recordEvent(sql, { workspaceId: t.workspaceId, ticketId: t.id, kind: input.archived ? 'archived' : 'restored', actorId: p.identityId }, ctx.now());
    return { ok: true };
  });
}
