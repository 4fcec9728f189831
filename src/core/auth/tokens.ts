import { z } from 'zod';
import type { Db } from '../../db/connect.ts';
import { idField, withReasons } from '../validation.ts';
import { invalid, notFound } from '../errors.ts';
import { defineOp } from '../operation.ts';
import { okSchema } from '../response-schema.ts';
import { datetimeSchema } from '../input.ts';
import { requireAdmin } from './guards.ts';
import { isAdminRole, scopes, type Scope } from './principal.ts';
import { createdTokenSchema, tokenListSchema, type TokenView } from './schema.ts';
import { newApiToken, sha256 } from './secrets.ts';
import { TOKEN_REVOKED_CHANNEL } from './token-verifier.ts';
import { unknownPerson } from '../resolve/people.ts';

export const createTokenInput = z.object({
  name: z.string().trim().min(1).max(100).describe('A label to recognise the token by'),
  scopes: z.array(z.enum(scopes)).min(1).max(scopes.length).describe('read, write, triage and/or admin (admin: Owner or Admin only)'),
  projectIds: z.array(z.uuid()).max(100).nullish().describe('Restrict the token to these projects'),
  kind: z.enum(['delegated', 'agent']).default('delegated'),
  agentId: z.uuid().nullish().describe('The agent account an agent token acts as'),
  expiresAt: datetimeSchema.nullish(),
});
export type CreateTokenInput = z.input<typeof createTokenInput>;

export type { TokenView } from './schema.ts';

interface TokenRow {
  id: string;
  name: string;
  scopes: Scope[];
  project_ids: string[] | null;
  kind: 'delegated' | 'agent';
  acts_as: string;
  token_hint: string;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const view = (r: TokenRow): TokenView => ({
  id: r.id,
  name: r.name,
  scopes: r.scopes,
  projectIds: r.project_ids,
  kind: r.kind,
  actsAs: r.acts_as,
  hint: r.token_hint,
  expiresAt: iso(r.expires_at),
  revokedAt: iso(r.revoked_at),
  lastUsedAt: iso(r.last_used_at),
  createdAt: r.created_at.toISOString(),
});

/** Stores a new token and returns its secret, which is never shown again. Checks nothing: callers do. */
export async function issueToken(
  sql: Db,
  t: {
    workspaceId: string;
    createdBy: string;
    actsAs: string;
    kind: 'delegated' | 'agent';
    name: string;
    scopes: readonly Scope[];
    projectIds?: readonly string[] | null;
    expiresAt?: Date | null;
  },
): Promise<TokenView & { token: string }> {
  const token = newApiToken();
  const [row] = await sql<TokenRow[]>`
    insert into api_tokens (workspace_id, created_by, acts_as, kind, name, token_hash, token_hint, scopes, project_ids, expires_at)
    values (${t.workspaceId}, ${t.createdBy}, ${t.actsAs}, ${t.kind}, ${t.name}, ${sha256(token)}, ${token.slice(0, 7) + '…' + token.slice(-4)},
            ${[...new Set(t.scopes)]}::text[], ${t.projectIds ? [...new Set(t.projectIds)] : null}::uuid[], ${t.expiresAt ?? null})
    returning id, name, scopes, project_ids, kind, acts_as, token_hint, expires_at, revoked_at, last_used_at, created_at`;
  return { ...view(row!), token };
}

/** POST /tokens: session only. A delegated token acts as its creator; an agent token (Owner/Admin) as an agent account. */
export const createToken = defineOp({
  name: 'tokens.create',
  action: 'tokens.create',
  input: createTokenInput,
  output: createdTokenSchema,
  tx: true,
  run: async (ctx, input): Promise<TokenView & { token: string }> => {
    const { sql, principal: p } = ctx;
    // an admin-scoped token does what its person's role allows them administratively: only they mint one
    if (input.scopes.includes('admin')) requireAdmin(p, 'Only an owner or admin may create admin-scoped tokens.', { field: 'scopes' });
    let actsAs = p.identityId;
    if (input.kind === 'agent') {
      requireAdmin(p, 'Only an owner or admin may create agent tokens.');
      if (!input.agentId) throw invalid('agent_required', { field: 'agentId' }, 'An agent token needs agentId.');
      const [agent] = await sql`select 1 from memberships where workspace_id = ${p.workspaceId} and identity_id = ${input.agentId} and role = 'agent'`;
      if (!agent) throw unknownPerson('subject', { identityId: input.agentId }, 'No such agent in this workspace.');
      actsAs = input.agentId;
    }
    if (input.projectIds?.length) {
      const found = await sql`select id from projects where workspace_id = ${p.workspaceId} and id = any(${input.projectIds}::uuid[])`;
      if (found.length !== new Set(input.projectIds).size) throw notFound('unknown_project', undefined, 'A project of the allow-list does not exist.');
    }
    const expiresAt = input.expiresAt ? new Date(input.expiresAt) : null;
    if (expiresAt && expiresAt <= ctx.now()) throw invalid('expiry_past', { field: 'expiresAt' }, 'expiresAt must be in the future.');
    return issueToken(sql, {
      workspaceId: p.workspaceId,
      createdBy: p.identityId,
      actsAs,
      kind: input.kind,
      name: input.name,
      scopes: input.scopes,
      projectIds: input.projectIds ?? null,
      expiresAt,
    });
  },
});

/** GET /tokens: the caller's own tokens; Owner and Admin see every token of the workspace. */
export const listTokens = defineOp({
  name: 'tokens.list',
  action: 'tokens.list',
  input: z.object({}),
  output: tokenListSchema,
  run: async (ctx): Promise<{ tokens: TokenView[] }> => {
    const p = ctx.principal;
    const rows = await ctx.sql<TokenRow[]>`
      select id, name, scopes, project_ids, kind, acts_as, token_hint, expires_at, revoked_at, last_used_at, created_at
      from api_tokens
      where workspace_id = ${p.workspaceId} ${isAdminRole(p.role) ? ctx.sql`` : ctx.sql`and created_by = ${p.identityId}`}
      order by created_at desc`;
    return { tokens: rows.map(view) };
  },
});

const revokeTokenInput = withReasons(z.object({ id: idField('The token id.') }), { id: 'bad_uuid' });

/** DELETE /tokens/{id}: revokes at once on every process (NOTIFY), idempotent. */
export const revokeToken = defineOp({
  name: 'tokens.revoke',
  action: 'tokens.revoke',
  input: revokeTokenInput,
  output: okSchema,
  tx: true,
  run: async (ctx, { id }): Promise<{ ok: true }> => {
    const { sql, principal: p } = ctx;
    const [row] = await sql<{ id: string }[]>`
      update api_tokens set revoked_at = coalesce(revoked_at, ${ctx.now()})
      where id = ${id} and workspace_id = ${p.workspaceId}
        ${isAdminRole(p.role) ? sql`` : sql`and created_by = ${p.identityId}`}
      returning id`;
    if (!row) throw notFound();
    await sql`select pg_notify(${TOKEN_REVOKED_CHANNEL}, ${id})`;
    return { ok: true as const };
  },
});
