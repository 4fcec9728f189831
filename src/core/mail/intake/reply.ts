import type { Db } from '../../../db/connect.ts';
import { isClientRole, type Principal } from '../../auth/principal.ts';
import type { Ctx } from '../../ctx.ts';
import type { Audience } from '../../tickets/permissions.ts';
import { personSeesTicket, ticketClients } from '../../viewers/audience.ts';
import { grantViewers } from '../../viewers/grant.ts';
import type { Sender } from './sender.ts';

/**
 * Whether a reply's sender may have it on the ticket:
 * - `sees`: they see the ticket already (the visibility rule of every person: reporter, viewer,
 *   project member, Owner/Admin, ...);
 * - `may_view`: a client person of one of the ticket's clients (viewers/audience.ts ticketClients),
 *   who becomes a viewer, as a colleague would make them one;
 * - `refused`: anyone else: a client person of another client, an address tied to no client, or a
 *   workspace user outside the ticket's project (mail must not widen what a login can see).
 * A sender not yet created (identity null) is judged by the client their address would be tied to.
 */
export async function replyAccess(sql: Db, ticketId: string, s: Sender): Promise<'sees' | 'may_view' | 'refused'> {
  const [row] = await sql<{ sees: boolean; shareable: boolean }[]>`
    select ${personSeesTicket(sql, 'm', 't')} as sees,
           coalesce(m.role in ('client', 'client_elevated') and m.client_id in (${ticketClients(sql, 't')}), false) as shareable
    from tickets t
    cross join (select ${s.identityId}::uuid as identity_id, ${s.role}::text as role, ${s.clientId}::uuid as client_id) m
    where t.id = ${ticketId}`;
  if (!row) return 'refused';
  return row.sees ? 'sees' : row.shareable ? 'may_view' : 'refused';
}

/** Client people and senders tied to no client write for the client; workspace users internally. */
export const audienceOf = (s: Sender): Audience => (s.role === null || isClientRole(s.role) ? 'client' : 'internal');

/**
 * The sender as the actor of what the intake writes for them (grantViewers records `added_by`
 * and the event's actor from the context's principal). Never passed to `authorize`: the sender
 * is no logged-in caller, and the intake's own rules (replyAccess) decided.
 */
function senderCtx(sql: Db, now: Date, workspaceId: string, s: Sender & { identityId: string }): Ctx {
  const principal: Principal = {
    workspaceId,
    slug: '',
    identityId: s.identityId,
    name: s.name,
    role: s.role ?? 'client',
    clientId: s.clientId,
    via: 'session',
    scopes: new Set(),
    projectIds: null,
    tokenId: null,
    tokenKind: null,
    sessionId: null,
    reauthAt: null,
    source: 'ui',
  };
  return { sql, principal, now: () => now };
}

/** Makes the sender a viewer of the ticket (with its `viewer_added` event). */
export async function makeViewer(sql: Db, now: Date, ticket: { id: string; workspaceId: string }, s: Sender & { identityId: string }): Promise<void> {
  await grantViewers(senderCtx(sql, now, ticket.workspaceId, s), ticket, [s.identityId]);
}
