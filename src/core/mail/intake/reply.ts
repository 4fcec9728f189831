import type { Db } from '../../../db/connect.ts';
import { isClientRole } from '../../auth/principal.ts';
import type { Audience } from '../../access/permissions.ts';
import { personSeesTicket } from '../../viewers/audience.ts';
import type { Sender } from './sender.ts';

/**
 * Whether a reply's sender may have it on the ticket:
 * - `sees`: they see the ticket already (the visibility rule of every person: reporter, viewer,
 *   project member, Owner/Admin, ...);
 * - `invited`: the reply came back to a reply address we sent them about this very ticket;
 * - `refused`: anyone else, a client person of the ticket's own client included: mail never
 *   widens what a login sees (ticket numbers are sequential; a subject tag is easy to write).
 * A sender not yet created (identity null) sees nothing.
 */
export async function replyAccess(sql: Db, ticketId: string, s: Sender, invitedTo: string | null): Promise<'sees' | 'invited' | 'refused'> {
  if (invitedTo === ticketId) return 'invited';
  const [row] = await sql<{ sees: boolean }[]>`
    select ${personSeesTicket(sql, 'm', 't')} as sees
    from tickets t
    cross join (select ${s.identityId}::uuid as identity_id, ${s.role}::text as role, ${s.clientId}::uuid as client_id) m
    where t.id = ${ticketId}`;
  return row?.sees ? 'sees' : 'refused';
}

/** Client people and senders tied to no client write for the client; workspace users internally. */
export const audienceOf = (s: Sender): Audience => (s.role === null || isClientRole(s.role) ? 'client' : 'internal');
