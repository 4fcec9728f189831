import type { Db } from '../../db/connect.ts';
import type { Role, Scope } from '../auth/principal.ts';
import { sha256 } from '../auth/secrets.ts';
import { knownScopes } from './scopes.ts';

/**
 * An OAuth access token as the MCP door sees it: the delegated token behind its grant (who acts,
 * in which workspace, with which allow-list), narrowed to the scopes the token itself carries.
 * oidc-provider's opaque tokens are 43 base64url characters; anything else is refused unread.
 */
export const OAUTH_ACCESS_TOKEN_PATTERN = /^[A-Za-z0-9_-]{32,128}$/;

export interface AccessTokenGrant {
  /** The delegated API token behind the grant (rate limits, idempotency keys, audit, last use). */
  id: string;
  workspaceId: string;
  slug: string;
  actsAs: string;
  name: string;
  role: Role;
  clientId: string | null;
  scopes: Scope[];
  projectIds: string[] | null;
  /** The earlier of the access token's and the delegated token's expiry. */
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  /** The resource the token was issued for (RFC 8707): it is valid there and nowhere else. */
  audience: string[];
}

export async function loadAccessToken(sql: Db, raw: string, now: Date): Promise<AccessTokenGrant | undefined> {
  const [r] = await sql<
    {
      id: string;
      workspace_id: string;
      slug: string;
      acts_as: string;
      name: string;
      role: Role;
      client_id: string | null;
      scopes: Scope[];
      project_ids: string[] | null;
      expires_at: Date | null;
      token_expires_at: Date | null;
      last_used_at: Date | null;
      scope: string | null;
      aud: unknown;
    }[]
  >`
    select t.id, t.workspace_id, w.slug, t.acts_as, i.name, m.role, m.client_id, t.scopes, t.project_ids,
           t.expires_at, r.expires_at as token_expires_at, t.last_used_at, r.payload ->> 'scope' as scope, r.payload -> 'aud' as aud
    from oauth_records r
    join oauth_grants g on g.grant_id = r.grant_id
    join api_tokens t on t.id = g.token_id
    join workspaces w on w.id = t.workspace_id
    join identities i on i.id = t.acts_as
    join memberships m on m.workspace_id = t.workspace_id and m.identity_id = t.acts_as and m.deactivated_at is null
    where r.model = 'AccessToken' and r.id_hash = ${sha256(raw)} and r.expires_at > ${now}
      and t.revoked_at is null and (t.expires_at is null or t.expires_at > ${now})`;
  if (!r) return undefined;
  const carried = new Set<Scope>(knownScopes(r.scope ?? ''));
  const ends = [r.expires_at, r.token_expires_at].filter((d): d is Date => d !== null);
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    slug: r.slug,
    actsAs: r.acts_as,
    name: r.name,
    role: r.role,
    clientId: r.client_id,
    scopes: r.scopes.filter((s) => carried.has(s)),
    projectIds: r.project_ids,
    expiresAt: ends.length ? new Date(Math.min(...ends.map((d) => d.getTime()))) : null,
    lastUsedAt: r.last_used_at,
    audience: Array.isArray(r.aud) ? r.aud.map(String) : typeof r.aud === 'string' ? [r.aud] : [],
  };
}
