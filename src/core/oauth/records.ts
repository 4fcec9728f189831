import type { Db } from '../../db/connect.ts';
import { sha256 } from '../auth/secrets.ts';
import { TOKEN_REVOKED_CHANNEL } from '../auth/token-verifier.ts';

/**
 * The storage of the authorization server's objects (the adapter oidc-provider asks for, one
 * instance per model: AccessToken, RefreshToken, AuthorizationCode, Grant, Session, Interaction,
 * Client...), in `oauth_records`. The library's protocol code decides what to store; this only
 * keeps it, with two rules of ours: an id is stored as its SHA-256 (a code's or token's id is the
 * secret itself), and anything that ends a grant also ends the delegated token behind it, at once
 * on every process (the verifier's NOTIFY channel).
 */

/** What oidc-provider stores for one object; `jti` is its id, kept out of the row. */
export type OAuthPayload = Record<string, unknown> & { grantId?: string; uid?: string; jti?: string };

export class OAuthRecords {
  constructor(
    private sql: Db,
    private model: string,
    private now: () => Date,
  ) {}

  async upsert(id: string, payload: OAuthPayload, expiresIn?: number): Promise<void> {
    const { jti: _secret, ...rest } = payload;
    const expiresAt = expiresIn ? new Date(this.now().getTime() + expiresIn * 1000) : null;
    // a Grant's own id is its grant: revoking by grant id removes it with its codes and tokens
    const grantId = this.model === 'Grant' ? id : (payload.grantId ?? null);
    await this.sql`
      insert into oauth_records (model, id_hash, payload, grant_id, uid, expires_at)
      values (${this.model}, ${sha256(id)}, ${this.sql.json(rest as never)}, ${grantId}, ${payload.uid ?? null}, ${expiresAt})
      on conflict (model, id_hash) do update
        set payload = excluded.payload, grant_id = excluded.grant_id, uid = excluded.uid, expires_at = excluded.expires_at`;
  }

  async find(id: string): Promise<OAuthPayload | undefined> {
    const [r] = await this.sql<{ payload: OAuthPayload; consumed_at: Date | null }[]>`
      select payload, consumed_at from oauth_records
      where model = ${this.model} and id_hash = ${sha256(id)} and (expires_at is null or expires_at > ${this.now()})`;
    if (!r) return undefined;
    // a grant whose delegated token was revoked (the grants page, DELETE /tokens) is no grant: refresh fails
    if (this.model === 'Grant' && !(await this.grantLive(id))) return undefined;
    return { ...r.payload, jti: id, ...(r.consumed_at ? { consumed: true } : {}) };
  }

  async findByUid(uid: string): Promise<OAuthPayload | undefined> {
    const [r] = await this.sql<{ payload: OAuthPayload; consumed_at: Date | null }[]>`
      select payload, consumed_at from oauth_records
      where model = ${this.model} and uid = ${uid} and (expires_at is null or expires_at > ${this.now()})
      limit 1`;
    // the id of an object found by uid is unknown here (only its hash is kept): only sessions are
    // looked up this way, and oidc-provider reads their uid, never their id, from such a lookup
    return r ? { ...r.payload, ...(r.consumed_at ? { consumed: true } : {}) } : undefined;
  }

  findByUserCode(): Promise<undefined> {
    return Promise.resolve(undefined); // no device flow
  }

  async consume(id: string): Promise<void> {
    await this.sql`update oauth_records set consumed_at = ${this.now()} where model = ${this.model} and id_hash = ${sha256(id)}`;
  }

  async destroy(id: string): Promise<void> {
    const [r] = await this.sql<{ grant_id: string | null }[]>`
      delete from oauth_records where model = ${this.model} and id_hash = ${sha256(id)} returning grant_id`;
    if (this.model === 'Grant') await endGrant(this.sql, id, this.now());
    else if (r?.grant_id && this.model === 'AccessToken') await announce(this.sql, r.grant_id);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.sql`delete from oauth_records where model = ${this.model} and grant_id = ${grantId}`;
    if (this.model === 'AccessToken') await announce(this.sql, grantId);
  }

  private async grantLive(grantId: string): Promise<boolean> {
    const [r] = await this.sql`
      select 1 from oauth_grants g join api_tokens t on t.id = g.token_id
      where g.grant_id = ${grantId} and t.revoked_at is null`;
    // a grant not yet recorded (between the consent's save and its record) is live
    if (r) return true;
    const [known] = await this.sql`select 1 from oauth_grants where grant_id = ${grantId}`;
    return !known;
  }
}

/** Every cached access token of the grant is forgotten on every process (the verifier listens). */
async function announce(sql: Db, grantId: string): Promise<void> {
  await sql`select pg_notify(${TOKEN_REVOKED_CHANNEL}, token_id::text) from oauth_grants where grant_id = ${grantId}`;
}

/**
 * Ends a grant: its delegated token is revoked and its codes and tokens deleted (a reused code, a
 * replayed refresh token, a revoked refresh token, or the person on the grants page).
 */
export async function endGrant(sql: Db, grantId: string, now: Date): Promise<void> {
  await sql`
    update api_tokens set revoked_at = coalesce(revoked_at, ${now})
    where id = (select token_id from oauth_grants where grant_id = ${grantId})`;
  await sql`delete from oauth_records where grant_id = ${grantId}`;
  await announce(sql, grantId);
}

/**
 * The hourly `sessions:cleanup` cron task (with expired browser sessions'): codes, tokens,
 * interactions and sessions of the authorization server past their lifetime. Grants and
 * registered clients expire too; a grant's delegated token row stays (revoked or not) for the
 * grants page and the audit.
 */
export async function deleteExpiredOAuthRecords(sql: Db, now: Date = new Date()): Promise<number> {
  const r = await sql`delete from oauth_records where expires_at < ${now}`;
  return r.count;
}
