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
 * identity when the email is new, and naming it when it has no login of its own (issue 19: a
 * name from an admin wins over one learned from mail). Returns the identity id. Both rows are written in one
 * transaction (the caller's, when it has one), so a refused membership (say, an unknown
 * workspace) leaves no orphan identity or changed password behind.
 */
export async function addPerson(sql: Db, p: NewPerson): Promise<string> {
  // hashed before the transaction opens: scrypt takes tens of milliseconds
  const passwordHash = p.password ? await hashPassword(p.password) : null;
  const kind = p.role === 'agent' ? 'agent' : 'person';
  return inTransaction(sql, async (sql) => {
    // An admin's name wins over one learned from mail (an identity without a login of its own);
    // a person with an account keeps the name they have everywhere.
    const [identity] = await sql<{ id: string }[]>`
      insert into identities (kind, email, name, password_hash) values (${kind}, ${p.email}, ${p.name}, ${passwordHash})
      on conflict (lower(email)) do update set password_hash = coalesce(excluded.password_hash, identities.password_hash),
        name = case when identities.password_hash is null then excluded.name else identities.name end
      returning id`;
    // and in this workspace, what its mail once called them yields to it
    await sql`delete from contact_names where workspace_id = ${p.workspaceId} and identity_id = ${identity!.id}`;
    await sql`
      insert into memberships (workspace_id, identity_id, role, client_id, timezone, weekly_target_minutes)
      values (${p.workspaceId}, ${identity!.id}, ${p.role}, ${p.clientId ?? null}, ${p.timezone ?? 'UTC'}, ${p.weeklyTargetMinutes ?? null})
      on conflict (workspace_id, identity_id) do update set role = excluded.role, client_id = excluded.client_id`;
    return identity!.id;
  });
}
