import type { Db } from '../../db/connect.ts';
import type { Role } from '../auth/principal.ts';

/**
 * What the machine operator's set-up commands look up by name before there is anyone to act as
 * (creating a workspace's people and tokens on the server: `wt user create`, `wt token create`).
 * Every later command runs as a principal and names things through src/core/resolve, as MCP does.
 * Each answers null for nothing found; the caller words the refusal.
 */

export async function workspaceOfSlug(sql: Db, slug: string): Promise<string | null> {
  const [w] = await sql<{ id: string }[]>`select id from workspaces where slug = ${slug}`;
  return w?.id ?? null;
}

/** A person by email, member of the workspace or not (a new member is added by address). */
export async function identityOfEmail(sql: Db, email: string): Promise<string | null> {
  const [i] = await sql<{ id: string }[]>`select id from identities where lower(email) = lower(${email})`;
  return i?.id ?? null;
}

export interface MemberRow {
  identityId: string;
  role: Role;
  clientId: string | null;
}

export async function memberOfEmail(sql: Db, workspaceId: string, email: string): Promise<MemberRow | null> {
  const [m] = await sql<MemberRow[]>`
    select m.identity_id as "identityId", m.role, m.client_id as "clientId"
    from memberships m join identities i on i.id = m.identity_id
    where m.workspace_id = ${workspaceId} and lower(i.email) = lower(${email})`;
  return m ?? null;
}

export async function memberRole(sql: Db, workspaceId: string, identityId: string): Promise<Role | null> {
  const [m] = await sql<{ role: Role }[]>`select role from memberships where workspace_id = ${workspaceId} and identity_id = ${identityId}`;
  return m?.role ?? null;
}

export async function clientOfCode(sql: Db, workspaceId: string, code: string): Promise<string | null> {
  const [c] = await sql<{ id: string }[]>`select id from clients where workspace_id = ${workspaceId} and code = ${code.trim().toUpperCase()}`;
  return c?.id ?? null;
}

/** Projects by current key, in the order given; null when any key names none. */
export async function projectIdsOfKeys(sql: Db, workspaceId: string, keys: readonly string[]): Promise<string[] | null> {
  const rows = await sql<
    { id: string; key: string }[]
  >`select id, key from projects where workspace_id = ${workspaceId} and key = any(${keys as string[]}::text[])`;
  const ids = keys.map((k) => rows.find((r) => r.key === k)?.id);
  return ids.every((id): id is string => id !== undefined) ? ids : null;
}
