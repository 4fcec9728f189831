import type { Db } from '../../../db/connect.ts';
import type { Role } from '../../auth/principal.ts';

/** The sender of a message as the workspace knows them (or would, once created). */
export interface Sender {
  /** Null until created: an unknown address. */
  identityId: string | null;
  email: string;
  name: string;
  /** Their membership of the workspace; null for none (an unknown sender tied to no client). */
  role: Role | null;
  clientId: string | null;
  /**
   * A workspace user of this workspace, or a person with a login: only a proven message may act
   * as them (import.ts). A contact without a login has no other credential than the address.
   */
  guarded: boolean;
}

/** Addresses at these providers say nothing about the company: never tie a sender to a client by them. */
const PUBLIC_DOMAINS = new Set([
  'gmail.com',
  'googlemail.com',
  'outlook.com',
  'hotmail.com',
  'live.com',
  'msn.com',
  'yahoo.com',
  'icloud.com',
  'me.com',
  'aol.com',
  'proton.me',
  'protonmail.com',
  'gmx.de',
  'gmx.net',
  'web.de',
  't-online.de',
  'orange.fr',
  'free.fr',
  'laposte.net',
  'yandex.ru',
  'mail.ru',
]);

/** Identities store an address only in this shape (sql/001 check). */
export const STORABLE_ADDRESS = /^[^@\s]+@[^@\s]+$/;

/**
 * Who sent a message: their identity and membership when known; for an unknown address the
 * client they would be tied to (see clientForAddress) and a name from the From header.
 */
export async function findSender(sql: Db, workspaceId: string, from: { address: string; name: string }): Promise<Sender> {
  const email = from.address.toLowerCase();
  const [known] = await sql<{ id: string; name: string; role: Role | null; clientId: string | null; guarded: boolean }[]>`
    select i.id, coalesce(cn.name, i.name) as name, m.role, m.client_id as "clientId",
           (i.password_hash is not null or i.kind = 'agent' or coalesce(m.role in ('owner', 'admin', 'member', 'agent'), false)) as guarded
    from identities i
    left join memberships m on m.workspace_id = ${workspaceId} and m.identity_id = i.id
    left join contact_names cn on cn.workspace_id = ${workspaceId} and cn.identity_id = i.id
    where lower(i.email) = ${email}`;
  const name = displayName(from);
  const guarded = known?.guarded ?? false;
  if (known?.role) return { identityId: known.id, email, name: known.name, role: known.role, clientId: known.clientId, guarded };
  const clientId = await clientForAddress(sql, workspaceId, email);
  return { identityId: known?.id ?? null, email, name, role: clientId ? 'client' : null, clientId, guarded };
}

function displayName(from: { address: string; name: string }): string {
  const name = from.name.replace(/\s+/g, ' ').trim() || from.address.split('@')[0]!;
  return Array.from(name).slice(0, 200).join('');
}

/**
 * The client an unknown address belongs to: the client one of whose billing recipients it is;
 * else the one client whose billing recipients or client users share its domain (never a public
 * mail provider's, and not when two clients do). Null when none or several match.
 */
export async function clientForAddress(sql: Db, workspaceId: string, email: string): Promise<string | null> {
  const exact = await sql<{ clientId: string }[]>`
    select distinct r.client_id as "clientId" from client_billing_recipients r join clients c on c.id = r.client_id
    where c.workspace_id = ${workspaceId} and lower(r.email) = ${email}`;
  if (exact.length === 1) return exact[0]!.clientId;
  const domain = email.split('@')[1]!;
  if (exact.length > 1 || PUBLIC_DOMAINS.has(domain)) return null;
  const byDomain = await sql<{ clientId: string }[]>`
    select r.client_id as "clientId" from client_billing_recipients r join clients c on c.id = r.client_id
    where c.workspace_id = ${workspaceId} and lower(split_part(r.email, '@', 2)) = ${domain}
    union
    select m.client_id from memberships m join identities i on i.id = m.identity_id
    where m.workspace_id = ${workspaceId} and m.client_id is not null and lower(split_part(i.email, '@', 2)) = ${domain}`;
  return byDomain.length === 1 ? byDomain[0]!.clientId : null;
}

/**
 * Writes the sender's identity (a person without a login) and, when tied to a client, their
 * `client` membership; answers the sender with its identity id. A known member is left as is.
 * Identities are shared by every workspace, so the name a message gives is this workspace's
 * only (contact_names): the identity itself is named by its address until a person or an admin
 * names it, and one workspace's mail never names a person in another.
 */
export async function ensureSender(sql: Db, workspaceId: string, s: Sender): Promise<Sender & { identityId: string }> {
  let identityId = s.identityId;
  if (!identityId) {
    // an address another workspace's intake created meanwhile is the same person: reuse it
    await sql`insert into identities (kind, email, name) values ('person', ${s.email}, ${s.email.slice(0, 200)}) on conflict (lower(email)) do nothing`;
    const [row] = await sql<{ id: string }[]>`select id from identities where lower(email) = ${s.email}`;
    identityId = row!.id;
  }
  // a person this workspace knows only from mail: the name their mail gave, learned here once
  await sql`
    insert into contact_names (workspace_id, identity_id, name)
    select ${workspaceId}, ${identityId}, ${s.name}
    where not exists (select 1 from memberships m where m.workspace_id = ${workspaceId} and m.identity_id = ${identityId})
    on conflict do nothing`;
  if (s.clientId && s.role === 'client') {
    await sql`
      insert into memberships (workspace_id, identity_id, role, client_id) values (${workspaceId}, ${identityId}, 'client', ${s.clientId})
      on conflict (workspace_id, identity_id) do nothing`;
  }
  return { ...s, identityId };
}
