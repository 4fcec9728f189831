import type { Db } from '../../db/connect.ts';
import type { Audience } from '../access/permissions.ts';
import { unknownPerson } from '../resolve/people.ts';

type Fragment = ReturnType<Db>;

/**
 * "The person of membership `m` can see ticket `t`": the rule of access/visible.ts, written for
 * any member of the workspace instead of the caller (no token narrowing: that belongs to a
 * credential, not to a person). Keep the two in step.
 */
export function personSeesTicket(sql: Db, m = 'm', t = 't'): Fragment {
  const [mm, tt] = [sql(m), sql(t)];
  const viewer = sql`exists (select 1 from ticket_viewers v where v.ticket_id = ${tt}.id and v.identity_id = ${mm}.identity_id)`;
  return sql`coalesce(case
    when ${mm}.role in ('owner', 'admin') then true
    when ${mm}.role in ('member', 'agent') then ${tt}.project_id is null
      or exists (select 1 from project_memberships pm where pm.project_id = ${tt}.project_id and pm.identity_id = ${mm}.identity_id)
      or ${tt}.reporter_id = ${mm}.identity_id or ${tt}.assignee_id = ${mm}.identity_id or ${viewer}
    when ${mm}.role = 'client_elevated' then ${tt}.project_id in (
        select p.id from projects p where p.billing_client_id = ${mm}.client_id
        union all select pc.project_id from project_collaborators pc where pc.client_id = ${mm}.client_id)
      or ${tt}.reporter_id = ${mm}.identity_id or ${viewer}
    else ${tt}.reporter_id = ${mm}.identity_id or ${tt}.assignee_id = ${mm}.identity_id or ${viewer}
  end, false)`;
}

/**
 * The clients a ticket may be shared with: its billing client, its project's billing client and
 * collaborating clients, and the client of a client-user reporter (an emailed Inbox ticket has no
 * project yet, but its sender's colleagues may still be added).
 */
export function ticketClients(sql: Db, t = 't'): Fragment {
  const tt = sql(t);
  return sql`select ${tt}.billing_client_id where ${tt}.billing_client_id is not null
    union all select p.billing_client_id from projects p where p.id = ${tt}.project_id and p.billing_client_id is not null
    union all select pc.client_id from project_collaborators pc where pc.project_id = ${tt}.project_id
    union all select rm.client_id from memberships rm
              where rm.workspace_id = ${tt}.workspace_id and rm.identity_id = ${tt}.reporter_id and rm.client_id is not null`;
}

/** One workspace member as seen from one ticket. */
export interface PersonOnTicket {
  identityId: string;
  name: string;
  clientId: string | null;
  clientName: string | null;
  /** Can see the ticket now. */
  sees: boolean;
  /** A workspace user, or a client user of one of the ticket's clients. */
  shareable: boolean;
}

/**
 * Looks up `ids` as members of the ticket's workspace. Unknown ids (no identity, not a member of
 * this workspace, or a deactivated member: nobody adds or mentions them) are 404 `unknown_person`
 * with the first such `identityId`.
 */
export async function peopleOnTicket(sql: Db, ticket: { id: string; workspaceId: string }, ids: readonly string[]): Promise<PersonOnTicket[]> {
  if (ids.length === 0) return [];
  const rows = await sql<PersonOnTicket[]>`
    select m.identity_id as "identityId", person_name(m.workspace_id, i.id, i.name) as name, m.client_id as "clientId", c.name as "clientName",
           ${personSeesTicket(sql)} as sees,
           (m.client_id is null or m.client_id in (${ticketClients(sql)})) as shareable
    from tickets t
    join memberships m on m.workspace_id = t.workspace_id
    join identities i on i.id = m.identity_id
    left join clients c on c.id = m.client_id
    where t.id = ${ticket.id} and m.workspace_id = ${ticket.workspaceId} and m.identity_id = any(${ids as string[]}::uuid[])
      and m.deactivated_at is null`;
  const byId = new Map(rows.map((r) => [r.identityId, r]));
  return ids.map((id) => {
    const person = byId.get(id);
    if (!person) throw unknownPerson('subject', { identityId: id });
    return person;
  });
}

export interface ClientPerson {
  identityId: string;
  name: string;
  clientName: string | null;
}

export interface MentionOutcome {
  /** Mentioned client people of the ticket's clients who cannot see it yet: they become viewers. */
  willGainAccess: ClientPerson[];
  /** Mentions that are refused: client people in an internal comment, or of a client outside the ticket's. */
  denied: { identityId: string; name: string }[];
}

/** POST /tickets/{ref}/visibility's answer: who would read a comment (src/core/viewers/preview.ts). */
export interface VisibilityPreview extends MentionOutcome {
  audience: 'internal' | 'client';
  /** Workspace members (owner, admin, member, agent) who can see the ticket: every one of them reads either audience. */
  workspaceUsers: number;
  /** Client people who can see the ticket now and so will read a `client` comment; empty for `internal`. */
  clientPeople: ClientPerson[];
}

/**
 * What mentioning `ids` in a comment of `audience` does. Workspace users are neither: a mention
 * never changes what a workspace user may see. Client people who already see the ticket are
 * neither as well (they are among the comment's readers already).
 */
export async function classifyMentions(
  sql: Db,
  ticket: { id: string; workspaceId: string },
  audience: Audience,
  ids: readonly string[],
): Promise<MentionOutcome> {
  const people = await peopleOnTicket(sql, ticket, uniqueIds(ids));
  const out: MentionOutcome = { willGainAccess: [], denied: [] };
  for (const person of people) {
    if (person.clientId === null) continue;
    if (audience === 'internal' || !person.shareable) out.denied.push({ identityId: person.identityId, name: person.name });
    else if (!person.sees) out.willGainAccess.push({ identityId: person.identityId, name: person.name, clientName: person.clientName });
  }
  return out;
}

/** Lower-cased, de-duplicated, in first-seen order. */
export function uniqueIds(ids: readonly string[]): string[] {
  return [...new Set(ids.map((id) => id.toLowerCase()))];
}
