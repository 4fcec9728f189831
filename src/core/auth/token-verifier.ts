import type { Db } from '../../db/connect.ts';
import { notFound, unauthenticated } from '../errors.ts';
import type { Principal, Role, Scope } from './principal.ts';
import { API_TOKEN_PATTERN, sha256, sha256Key } from './secrets.ts';
import { loadAccessToken, OAUTH_ACCESS_TOKEN_PATTERN } from '../oauth/access-tokens.ts';

/**
 * The door's side of API tokens: reading a Bearer header and verifying its token (what every
 * adapter does on each request). Issuing, listing and revoking tokens are operations, in tokens.ts.
 */

/** Where a revocation is announced (tokens.ts's revokeToken) and heard by every process's verifier. */
export const TOKEN_REVOKED_CHANNEL = 'wt_token_revoked';

interface VerifiedToken {
  id: string;
  workspaceId: string;
  slug: string;
  actsAs: string;
  name: string;
  role: Role;
  clientId: string | null;
  kind: 'delegated' | 'agent';
  scopes: ReadonlySet<Scope>;
  projectIds: readonly string[] | null;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  cachedUntil: number;
  /** An OAuth access token's resources (RFC 8707); absent for a `wt_` token. */
  audience?: readonly string[];
}

/** The secret of an `Authorization: Bearer <token>` header; any other form is 401, the same for every adapter. */
export function bearerSecret(header: string): string {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) throw unauthenticated('Send Authorization: Bearer <token>.');
  return m[1]!;
}

/**
 * Verifies Bearer tokens. A verified token is cached for a few seconds so the hot path
 * costs no database round trip; a revocation clears it at once on every process through
 * LISTEN/NOTIFY, and the short lifetime bounds staleness should a notification be missed.
 */
export class TokenVerifier {
  private cache = new Map<string, VerifiedToken>();
  private stopListening: (() => Promise<void>) | null = null;

  constructor(
    private sql: Db,
    private ttlMs: number,
  ) {}

  async listen(): Promise<void> {
    // postgres.js re-subscribes after a lost connection (a database restart) and then calls the
    // third argument: revocations sent while it was away were missed, so forget every token.
    const sub = await this.sql.listen(
      TOKEN_REVOKED_CHANNEL,
      (id) => this.forget(id),
      () => this.cache.clear(),
    );
    this.stopListening = () => sub.unlisten();
  }

  async close(): Promise<void> {
    await this.stopListening?.();
  }

  forget(tokenId: string): void {
    for (const [key, v] of this.cache) if (v.id === tokenId) this.cache.delete(key);
  }

  /** Verifies a token for workspace `slug`, or (null) for whichever workspace the token belongs to. */
  async verify(raw: string, slug: string | null, now: Date): Promise<Principal> {
    if (!API_TOKEN_PATTERN.test(raw)) throw unauthenticated('The token is malformed.');
    const key = sha256Key(raw);
    // a hit allocates no loader closure: this runs on every token request
    return this.principalOf(this.fresh(key, now) ?? this.keep(key, await this.load(raw, now)), slug, now);
  }

  /**
   * Verifies a `wt_` token, or an OAuth access token issued by this server's authorization
   * server for `resource` (its audience, RFC 8707): a delegated token of the person who
   * consented. An access token is refused on any other resource, so only the MCP door calls this.
   */
  async verifyForResource(raw: string, resource: string, now: Date): Promise<Principal> {
    if (API_TOKEN_PATTERN.test(raw)) return this.verify(raw, null, now);
    if (!OAUTH_ACCESS_TOKEN_PATTERN.test(raw)) throw unauthenticated('The token is malformed.');
    const key = sha256Key(raw);
    const t = this.fresh(key, now) ?? this.keep(key, await this.loadAccess(raw, now));
    if (!t.audience?.includes(resource)) throw unauthenticated('The token was issued for another resource.');
    return this.principalOf(t, null, now);
  }

  /** The cached verification of the token whose key this is, unless it is past its cache lifetime. */
  private fresh(key: string, now: Date): VerifiedToken | undefined {
    const t = this.cache.get(key);
    return t && t.cachedUntil >= now.getTime() ? t : undefined;
  }

  /** Caches a token just loaded; none (unknown, revoked, expired) is 401 and forgets the key. */
  private keep(key: string, t: VerifiedToken | undefined): VerifiedToken {
    if (!t) {
      this.cache.delete(key);
      throw unauthenticated('The token is unknown, revoked or expired.');
    }
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(key, t);
    return t;
  }

  private async loadAccess(raw: string, now: Date): Promise<VerifiedToken | undefined> {
    const g = await loadAccessToken(this.sql, raw, now);
    return g && { ...g, kind: 'delegated' as const, scopes: new Set(g.scopes), cachedUntil: now.getTime() + this.ttlMs };
  }

  private principalOf(t: VerifiedToken, slug: string | null, now: Date): Principal {
    if (t.expiresAt && t.expiresAt <= now) throw unauthenticated('The token has expired.');
    if (slug !== null && t.slug !== slug) throw notFound('unknown_workspace', undefined, 'No such workspace.');
    this.touch(t, now);
    return {
      workspaceId: t.workspaceId,
      slug: t.slug,
      identityId: t.actsAs,
      name: t.name,
      role: t.role,
      clientId: t.clientId,
      via: 'token',
      scopes: t.scopes,
      projectIds: t.projectIds,
      tokenId: t.id,
      tokenKind: t.kind,
      sessionId: null,
      reauthAt: null,
      source: 'api',
      door: 'rest',
    };
  }

  private async load(raw: string, now: Date): Promise<VerifiedToken | undefined> {
    const [r] = await this.sql<
      {
        id: string;
        workspace_id: string;
        slug: string;
        acts_as: string;
        name: string;
        role: Role;
        client_id: string | null;
        kind: 'delegated' | 'agent';
        scopes: Scope[];
        project_ids: string[] | null;
        expires_at: Date | null;
        last_used_at: Date | null;
      }[]
    >`
      select t.id, t.workspace_id, w.slug, t.acts_as, i.name, m.role, m.client_id, t.kind, t.scopes, t.project_ids, t.expires_at, t.last_used_at
      from api_tokens t
      join workspaces w on w.id = t.workspace_id
      join identities i on i.id = t.acts_as
      join memberships m on m.workspace_id = t.workspace_id and m.identity_id = t.acts_as
      where t.token_hash = ${sha256(raw)} and t.revoked_at is null and (t.expires_at is null or t.expires_at > ${now})
        and m.deactivated_at is null`;
    if (!r) return undefined;
    return {
      id: r.id,
      workspaceId: r.workspace_id,
      slug: r.slug,
      actsAs: r.acts_as,
      name: r.name,
      role: r.role,
      clientId: r.client_id,
      kind: r.kind,
      scopes: new Set(r.scopes),
      projectIds: r.project_ids,
      expiresAt: r.expires_at,
      lastUsedAt: r.last_used_at,
      cachedUntil: now.getTime() + this.ttlMs,
    };
  }

  /** Records last use at most once a minute per token, off the request path. */
  private touch(t: VerifiedToken, now: Date): void {
    if (t.lastUsedAt && now.getTime() - t.lastUsedAt.getTime() < 60_000) return;
    t.lastUsedAt = now;
    this.sql`update api_tokens set last_used_at = ${now} where id = ${t.id}`.catch(() => {});
  }
}
