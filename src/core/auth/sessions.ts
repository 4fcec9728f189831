import { z } from 'zod';
import type { Db } from '../../db/connect.ts';
import { forbidden, notFound, unauthenticated } from '../errors.ts';
import { definePublicOp } from '../operation.ts';
import type { GuardedBy } from './login-guard.ts';
import { scopes, type Principal, type Role } from './principal.ts';
import { reauthSchema, type SessionInfo } from './schema.ts';
import { newOpaqueSecret, sha256, verifyPassword } from './secrets.ts';

export const loginInput = z.object({
  email: z.string().trim().min(3).max(320),
  password: z.string().min(1).max(1000),
});
export const reauthInput = z.object({ password: z.string().min(1).max(1000) });

export interface Session {
  id: string;
  identityId: string;
  csrfToken: string;
  reauthAt: Date | null;
  expiresAt: Date;
}

export type { SessionInfo } from './schema.ts';

async function sessionInfo(sql: Db, identityId: string, csrfToken: string): Promise<SessionInfo> {
  const [who] = await sql<{ name: string; email: string | null }[]>`select name, email from identities where id = ${identityId}`;
  const workspaces = await sql<{ slug: string; name: string; role: Role }[]>`
    select w.slug, w.name, m.role from memberships m join workspaces w on w.id = m.workspace_id
    where m.identity_id = ${identityId} and m.deactivated_at is null order by w.slug`;
  return { identityId, name: who!.name, email: who!.email, workspaces: [...workspaces], csrfToken };
}

/** What a login runs with in place of a `Ctx`: there is no principal before it. */
export interface LoginCtx {
  sql: Db;
  now: () => Date;
  /** How long the new session lives. */
  ttlHours: number;
  /** The login/re-authentication throttle and the caller's address, where the adapter has them. */
  guard?: GuardedBy;
}

/**
 * POST /api/auth/login: a password login opens a session; the login also counts as a
 * re-authentication. The result carries the session's secret, which the door sets as the cookie
 * (the body is its `info`), so `output` is left to the door.
 */
export const login = definePublicOp({
  name: 'auth.login',
  input: loginInput,
  output: null,
  run: async (ctx: LoginCtx, input): Promise<{ secret: string; expiresAt: Date; info: SessionInfo }> => {
    const { sql, guard } = ctx;
    await guard?.guard.attempt(input.email, guard.address);
    const [who] = await sql<{ id: string; password_hash: string | null }[]>`
      select id, password_hash from identities where lower(email) = lower(${input.email}) and kind = 'person'`;
    const ok = await verifyPassword(input.password, who?.password_hash ?? null);
    if (!who || !ok) throw unauthenticated('The email or password is wrong.');
    await guard?.guard.succeeded(input.email, guard.address);
    return openSession(ctx, who.id);
  },
});

/** A new browser session for a person who just proved who they are (a login, an accepted invitation); it counts as a re-authentication. */
export async function openSession(
  ctx: Pick<LoginCtx, 'sql' | 'now' | 'ttlHours'>,
  identityId: string,
): Promise<{ secret: string; expiresAt: Date; info: SessionInfo }> {
  const { sql } = ctx;
  const now = ctx.now();
  const secret = newOpaqueSecret();
  const csrfToken = newOpaqueSecret(18);
  const expiresAt = new Date(now.getTime() + ctx.ttlHours * 3600_000);
  await sql`
    insert into sessions (token_hash, identity_id, csrf_token, reauth_at, expires_at, created_at, last_seen_at)
    values (${sha256(secret)}, ${identityId}, ${csrfToken}, ${now}, ${expiresAt}, ${now}, ${now})`;
  return { secret, expiresAt, info: await sessionInfo(sql, identityId, csrfToken) };
}

export async function findSession(sql: Db, secret: string, now: Date): Promise<Session | null> {
  if (secret.length > 100) return null;
  const [s] = await sql<{ id: string; identity_id: string; csrf_token: string; reauth_at: Date | null; expires_at: Date; last_seen_at: Date }[]>`
    select id, identity_id, csrf_token, reauth_at, expires_at, last_seen_at
    from sessions where token_hash = ${sha256(secret)} and expires_at > ${now}`;
  if (!s) return null;
  if (now.getTime() - s.last_seen_at.getTime() > 60_000) {
    sql`update sessions set last_seen_at = ${now} where id = ${s.id}`.catch(() => {});
  }
  return { id: s.id, identityId: s.identity_id, csrfToken: s.csrf_token, reauthAt: s.reauth_at, expiresAt: s.expires_at };
}

/**
 * What the operations on the caller's own browser session run with in place of a `Ctx`: they
 * act on a session, not inside a workspace, so the session (found from the cookie by the
 * adapter) takes the principal's place.
 */
export interface SessionCtx {
  sql: Db;
  now: () => Date;
  session: Session;
  /** The login/re-authentication throttle and the caller's address, where the adapter has them. */
  guard?: GuardedBy;
}

/** GET /api/auth/session: who is logged in, their workspaces and the CSRF token. */
export async function currentSession(ctx: SessionCtx): Promise<SessionInfo> {
  return sessionInfo(ctx.sql, ctx.session.identityId, ctx.session.csrfToken);
}

/**
 * POST /api/auth/reauth: stamps the re-authentication time that opens the ten-minute window.
 * Throttled like login and counted against the same email key, so a stolen session cookie
 * cannot be used to guess the password either.
 */
export const reauthenticate = definePublicOp({
  name: 'auth.reauthenticate',
  input: reauthInput,
  output: reauthSchema,
  run: async (ctx: SessionCtx, input): Promise<{ ok: true; reauthAt: string }> => {
    const { sql, session, guard } = ctx;
    const now = ctx.now();
    const [who] = await sql<{ email: string | null; password_hash: string | null }[]>`
      select email, password_hash from identities where id = ${session.identityId}`;
    // a person without an email (not one who can log in) is still throttled, by identity
    const key = who?.email ?? session.identityId;
    await guard?.guard.attempt(key, guard.address);
    if (!(await verifyPassword(input.password, who?.password_hash ?? null))) {
      throw forbidden('wrong_password', undefined, 'The password is wrong.');
    }
    await guard?.guard.succeeded(key, guard.address);
    await sql`update sessions set reauth_at = ${now} where id = ${session.id}`;
    return { ok: true, reauthAt: now.toISOString() };
  },
});

/** POST /api/auth/logout: the session ends. */
export async function logout(ctx: SessionCtx): Promise<{ ok: true }> {
  await ctx.sql`delete from sessions where id = ${ctx.session.id}`;
  return { ok: true };
}

/** The principal of a session inside one workspace; a workspace the person is not in does not exist for them. */
export async function sessionPrincipal(sql: Db, session: Session, slug: string): Promise<Principal> {
  const [m] = await sql<{ workspace_id: string; role: Role; client_id: string | null; name: string; deactivated: boolean }[]>`
    select m.workspace_id, m.role, m.client_id, i.name, m.deactivated_at is not null as deactivated
    from workspaces w
    join memberships m on m.workspace_id = w.id and m.identity_id = ${session.identityId}
    join identities i on i.id = m.identity_id
    where w.slug = ${slug}`;
  if (!m) throw notFound('unknown_workspace', undefined, 'No such workspace.');
  // a deactivated member's session no longer works here (src/core/people/deactivate.ts); others of theirs may
  if (m.deactivated) throw unauthenticated('Your membership of this workspace is deactivated.');
  return {
    workspaceId: m.workspace_id,
    slug,
    identityId: session.identityId,
    name: m.name,
    role: m.role,
    clientId: m.client_id,
    via: 'session',
    scopes: new Set(scopes),
    projectIds: null,
    tokenId: null,
    tokenKind: null,
    sessionId: session.id,
    reauthAt: session.reauthAt,
    source: 'ui',
    door: 'rest',
  };
}

/** The cron task `sessions:cleanup`: browser sessions that expired more than a day ago. */
export async function deleteExpiredSessions(sql: Db): Promise<number> {
  return (await sql`delete from sessions where expires_at < now() - interval '1 day'`).count;
}
