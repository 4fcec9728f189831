import { visibleTicket } from '../access/visible.ts';
import type { Ctx } from '../ctx.ts';
import { invalid, isAppError, notFound } from '../errors.ts';
import { loadTicket } from '../tickets/load.ts';
import { parseUuid } from '../validation.ts';
import { ambiguousName, isUuid } from './common.ts';

/**
 * A ticket by human id (`WEB-12`, old numbers and prefixes too) or UUID -> its UUID, for
 * operations whose body takes a ticket id (link target, parent, time entry). A UUID passes
 * through (the operation checks it, as on REST); a human id that names no visible ticket is the
 * same 404 `not_found`, with `field` naming the argument.
 */
export async function resolveTicketUuid(ctx: Ctx, ref: string, field: string): Promise<string> {
  if (isUuid(ref)) return ref.toLowerCase();
  try {
    return (await loadTicket(ctx, ref)).id;
  } catch (err) {
    if (isAppError(err) && err.code === 'not_found') throw notFound(undefined, { field }, `${field}: no such ticket.`);
    throw err;
  }
}

interface LinkRow {
  id: string;
  kind: string;
  direction: 'outgoing' | 'incoming';
}

/**
 * The id of the link between two visible tickets, optionally of one kind, for removing a link
 * by naming its two ends. None: 404 `unknown_link`; several (different kinds): 400
 * `ambiguous_link` listing them, to be repeated with `kind` or `linkId`.
 */
export async function resolveLinkId(ctx: Ctx, ticketRef: string, otherRef: string, kind: string | undefined, field: string): Promise<string> {
  const { sql, principal: p } = ctx;
  const ticket = (await loadTicket(ctx, ticketRef)).id;
  const other = await resolveTicketUuid(ctx, otherRef, field);
  // the other end must be visible: a UUID passed through is checked by the join below
  const links = await sql<LinkRow[]>`
    select l.id, l.kind, case when l.source_id = ${ticket}::uuid then 'outgoing' else 'incoming' end as direction
    from ticket_links l join tickets o on o.id = ${other}::uuid
    where ((l.source_id = ${ticket}::uuid and l.target_id = o.id) or (l.source_id = o.id and l.target_id = ${ticket}::uuid))
      and ${visibleTicket(sql, p, 'o')} ${kind ? sql`and l.kind = ${kind}` : sql``}
    order by l.created_at, l.id`;
  if (links.length === 0) throw notFound('unknown_link', { field }, 'These tickets are not linked.');
  if (links.length > 1) throw ambiguousName('ambiguous_link', field, otherRef, links);
  return links[0]!.id;
}

/** The link an unlink names: its id, or the other ticket (with the kind when the two share several links). */
export async function resolveLinkToRemove(ctx: Ctx, ticketRef: string, by: { linkId?: string; target?: string; kind?: string }): Promise<string> {
  if (by.linkId) return parseUuid(by.linkId, 'linkId');
  if (!by.target) throw invalid('link_required', { field: 'linkId' }, 'Give linkId, or the other ticket as target.');
  return resolveLinkId(ctx, ticketRef, by.target, by.kind, 'target');
}
