import type { Db } from '../../db/connect.ts';
import { addressableProject } from '../access/visible.ts';
import type { Principal, Scope } from '../auth/principal.ts';
import { issueToken } from '../auth/tokens.ts';
import { endGrant } from './records.ts';

/**
 * A person's OAuth grants: what the consent page approved for one client in one workspace,
 * backed by a delegated API token (sql/082_oauth.sql says why), and the page that lists and
 * revokes them.
 */

export interface GrantRecord {
  grantId: string;
  workspaceId: string;
  identityId: string;
  clientId: string;
  clientName: string;
  scopes: readonly Scope[];
  projectIds: readonly string[] | null;
}

/**
 * Records a consented grant and the delegated token behind it, inside the caller's transaction
 * (consent.ts checked the scopes and projects). A consent is remembered once per person and
 * client: an earlier grant to the same client ends (its tokens stop working), so the grants page
 * never holds two for one client.
 */
export async function recordGrant(sql: Db, g: GrantRecord, now: Date): Promise<{ tokenId: string }> {
  const token = await issueToken(sql, {
    workspaceId: g.workspaceId,
    createdBy: g.identityId,
    actsAs: g.identityId,
    kind: 'delegated',
    name: `OAuth: ${g.clientName}`.slice(0, 100),
    scopes: g.scopes,
    projectIds: g.projectIds,
  });
  await sql`
    insert into oauth_grants (grant_id, token_id, workspace_id, identity_id, client_id, client_name)
    values (${g.grantId}, ${token.id}, ${g.workspaceId}, ${g.identityId}, ${g.clientId}, ${g.clientName.slice(0, 200)})`;
  const earlier = await sql<{ grant_id: string }[]>`
    select g.grant_id from oauth_grants g join api_tokens t on t.id = g.token_id
    where g.identity_id = ${g.identityId} and g.client_id = ${g.clientId} and g.grant_id <> ${g.grantId} and t.revoked_at is null`;
  for (const e of earlier) await endGrant(sql, e.grant_id, now);
  return { tokenId: token.id };
}

/** The person's live grant to this client, if any: a remembered consent needs no new one. */
export async function liveGrantFor(sql: Db, identityId: string, clientId: string): Promise<string | null> {
  const [r] = await sql<{ grant_id: string }[]>`
    select g.grant_id from oauth_grants g join api_tokens t on t.id = g.token_id
    where g.identity_id = ${identityId} and g.client_id = ${clientId} and t.revoked_at is null
    order by g.created_at desc limit 1`;
  return r?.grant_id ?? null;
}

export interface GrantView {
  grantId: string;
  clientId: string;
  clientName: string;
  workspace: string;
  scopes: Scope[];
  projects: string[] | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** Every grant the person gave, newest first, with the projects of its allow-list by key. */
export async function listGrants(sql: Db, identityId: string): Promise<GrantView[]> {
  const rows = await sql<
    {
      grant_id: string;
      client_id: string;
      client_name: string;
      slug: string;
      scopes: Scope[];
      projects: string[] | null;
      created_at: Date;
      last_used_at: Date | null;
      revoked_at: Date | null;
    }[]
  >`
    select g.grant_id, g.client_id, g.client_name, w.slug, t.scopes, g.created_at, t.last_used_at, t.revoked_at,
           case when t.project_ids is null then null
                else (select array_agg(p.key order by p.key) from projects p where p.id = any(t.project_ids)) end as projects
    from oauth_grants g
    join api_tokens t on t.id = g.token_id
    join workspaces w on w.id = g.workspace_id
    where g.identity_id = ${identityId}
    order by g.created_at desc
    limit 200`;
  return rows.map((r) => ({
    grantId: r.grant_id,
    clientId: r.client_id,
    clientName: r.client_name,
    workspace: r.slug,
    scopes: r.scopes,
    projects: r.projects,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    revokedAt: r.revoked_at,
  }));
}

/** Projects the person may name in an allow-list (as a session in that workspace sees them). */
export async function grantableProjects(sql: Db, p: Principal): Promise<{ id: string; key: string; name: string }[]> {
  return sql<{ id: string; key: string; name: string }[]>`
    select pr.id, pr.key, pr.name from projects pr
    where pr.workspace_id = ${p.workspaceId} and ${addressableProject(sql, p, 'pr')}
    order by pr.key
    limit 500`;
}
