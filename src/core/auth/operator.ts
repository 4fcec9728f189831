import type { Db } from '../../db/connect.ts';
import { notFound } from '../errors.ts';
import { scopes, type Principal, type Role } from './principal.ts';

/**
 * The caller of a command run at the server (the CLI): someone with the database at hand is
 * trusted like a browser session of the person named (by default the workspace's first owner),
 * and still gets exactly that person's permissions — `authorize` decides as for REST.
 */
export async function operatorPrincipal(sql: Db, slug: string, email?: string): Promise<Principal> {
  const [m] = await sql<{ workspaceId: string; identityId: string; role: Role; clientId: string | null; name: string }[]>`
    select w.id as "workspaceId", m.identity_id as "identityId", m.role, m.client_id as "clientId", i.name
    from workspaces w
    join memberships m on m.workspace_id = w.id
    join identities i on i.id = m.identity_id
    where w.slug = ${slug} and m.deactivated_at is null and ${email ? sql`lower(i.email) = lower(${email})` : sql`m.role = 'owner'`}
    order by m.created_at, m.identity_id limit 1`;
  if (!m)
    throw notFound(
      email ? 'unknown_person' : 'unknown_workspace',
      undefined,
      email ? `No member ${email} in workspace ${slug}.` : `No workspace ${slug} with an owner.`,
    );
  return {
    workspaceId: m.workspaceId,
    slug,
    identityId: m.identityId,
    name: m.name,
    role: m.role,
    clientId: m.clientId,
    via: 'session',
    // a browser session holds every scope
    scopes: new Set(scopes),
    projectIds: null,
    tokenId: null,
    tokenKind: null,
    sessionId: null,
    reauthAt: null,
    source: 'ui',
    door: 'cli',
  };
}
