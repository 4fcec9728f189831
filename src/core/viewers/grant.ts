import type { Ctx } from '../ctx.ts';
import { holdTickets } from '../tickets/concurrency.ts';
import { recordEvents } from '../tickets/events.ts';

/**
 * Makes `ids` viewers of the ticket (checks nothing: callers do) and writes one `viewer_added`
 * event per grant. Returns the ids actually granted, in the given order; people who already were
 * viewers are left out. A ticket deleted meanwhile is 404, for every caller (viewers, mentions).
 */
export async function grantViewers(ctx: Ctx, ticket: { id: string; workspaceId: string }, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { sql, principal: p } = ctx;
  const now = ctx.now();
  await holdTickets(sql, [ticket.id]);
  const rows = await sql<{ identityId: string }[]>`
    insert into ticket_viewers (ticket_id, identity_id, added_by, created_at)
    select ${ticket.id}, x, ${p.identityId}, ${now} from unnest(${ids as string[]}::uuid[]) as x
    on conflict (ticket_id, identity_id) do nothing
    returning identity_id as "identityId"`;
  const granted = new Set(rows.map((r) => r.identityId));
  const added = ids.filter((id) => granted.has(id));
  await recordEvents(
    sql,
    added.map((identityId) => ({
      workspaceId: ticket.workspaceId,
      ticketId: ticket.id,
      kind: 'viewer_added' as const,
      actorId: p.identityId,
      payload: { identityId },
    })),
    now,
  );
  return added;
}
