import { inTransaction, type Db } from '../../db/connect.ts';
import { hashPassword } from '../auth/secrets.ts';
import type { Role } from '../auth/principal.ts';

export interface NewPerson {
  workspaceId: string;
  email: string;
  name: string;
  role: Role;
  password?: string | null;
  clientId?: string | null;
  timezone?: string;
  weeklyTargetMinutes?: number | null;
}

/**
 * Adds a person (or, for role `agent`, an agent account) to a workspace, creating the
 * identity when the email is new. Returns the identity id. Both rows are written in one
 * transaction (the caller's, when it has one), so a refused membership (say, an unknown
 * workspace) leaves no orphan identity or changed password behind.
 */
export async function addPerson(sql: Db, p: NewPerson): Promise<string> {
  // hashed before the transaction opens: scrypt takes tens of milliseconds
  const passwordHash = p.password ? await hashPassword(p.password) : null;
  const kind = p.role === 'agent' ? 'agent' : 'person';
  return inTransaction(sql, async (sql) => {
    const [identity] = await sql<{ id: string }[]>`
      insert into identities (kind, email, name, password_hash) values (${kind}, ${p.email}, ${p.name}, ${passwordHash})
      on conflict (lower(email)) do update set password_hash = coalesce(excluded.password_hash, identities.password_hash)
      returning id`;
    await sql`
      insert into memberships (workspace_id, identity_id, role, client_id, timezone, weekly_target_minutes)
      values (${p.workspaceId}, ${identity!.id}, ${p.role}, ${p.clientId ?? null}, ${p.timezone ?? 'UTC'}, ${p.weeklyTargetMinutes ?? null})
      on conflict (workspace_id, identity_id) do update set role = excluded.role, client_id = excluded.client_id`;
    return identity!.id;
  });
}
