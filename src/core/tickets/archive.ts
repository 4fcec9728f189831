import { requireSession } from '../auth/guards.ts';
import { tx, type Ctx } from '../ctx.ts';
import { forbidden } from '../errors.ts';
import { recordEvent } from './events.ts';
import { loadTicket } from './load.ts';
import { ticketPermissions } from './permissions.ts';
import { archiveTicketInput, parseTicketInput } from './schemas.ts';

/**
 * POST /tickets/{ref}/archive (browser session): `archived: true` takes the ticket off boards,
 * `false` restores it. Owner, Admin or a full project member (`permissions.archive`); Inbox
 * tickets only Owner/Admin. Asking for the state the ticket is already in changes nothing and
 * writes no event.
 */
export async function archiveTicket(ctx: Ctx, ref: string, raw: unknown): Promise<{ ok: true }> {
  requireSession(ctx.principal);
  const input = parseTicketInput(archiveTicketInput, raw);
  return tx(ctx, async (ctx) => {
    const { sql, principal: p } = ctx;
    const t = await loadTicket(ctx, ref, { lock: true });
    if (!ticketPermissions(p, t).archive)
      throw forbidden('archive_forbidden', undefined, 'Only an owner, admin or full project member may archive this ticket.');
    if (t.archived === input.archived) return { ok: true };
    await sql`update tickets set archived = ${input.archived} where id = ${t.id}`;
    await recordEvent(sql, { workspaceId: t.workspaceId, ticketId: t.id, kind: input.archived ? 'archived' : 'restored', actorId: p.identityId }, ctx.now());
    return { ok: true };
  });
}
