import { z } from 'zod';
import { TOKEN_REVOKED_CHANNEL } from '../auth/token-verifier.ts';
import { conflict, forbidden } from '../errors.ts';
import { defineOp } from '../operation.ts';
import { idField, withReasons } from '../validation.ts';
import { loadMember, memberSchema } from './member-view.ts';

const memberInput = withReasons(z.object({ identityId: idField('The member.') }), { identityId: 'bad_uuid' });

/**
 * POST /members/{identityId}/deactivate: the person keeps their membership (their name on
 * history, their time, tickets and billed entries stay as they are) but loses access at once:
 * their API tokens in this workspace are revoked (every process's verifier forgets them through
 * NOTIFY; the membership check in the verifier's query bounds a missed one by its cache time), and
 * their sessions answer 401 here (sessionPrincipal reads the mark on every request); sessions of a
 * person left with no active workspace are deleted. Nobody deactivates themselves (so an active
 * Owner always remains), and only an Owner deactivates an Owner.
 */
export const deactivateMember = defineOp({
  name: 'members.deactivate',
  action: 'members.deactivate',
  input: memberInput,
  output: memberSchema,
  tx: true,
  audit: { action: 'member.deactivate', target: (sent) => `identity ${String(sent.identityId)}` },
  run: async (ctx, { identityId }) => {
    const { sql, principal: p } = ctx;
    const m = await loadMember(sql, p.workspaceId, identityId, true);
    if (m.deactivatedAt) return m;
    if (identityId === p.identityId) throw conflict('self_deactivation', undefined, 'You cannot deactivate yourself.');
    if (m.role === 'owner' && p.role !== 'owner') throw forbidden('owner_only', undefined, 'Only an owner may deactivate an owner.');
    const now = ctx.now();
    await sql`update memberships set deactivated_at = ${now}, deactivated_by = ${p.identityId} where workspace_id = ${p.workspaceId} and identity_id = ${identityId}`;
    const revoked = await sql<{ id: string }[]>`
      update api_tokens set revoked_at = ${now}
      where workspace_id = ${p.workspaceId} and (acts_as = ${identityId} or created_by = ${identityId}) and revoked_at is null
      returning id`;
    // delivered at commit: the verifiers forget the tokens once the revocation is visible
    for (const t of revoked) await sql`select pg_notify(${TOKEN_REVOKED_CHANNEL}, ${t.id})`;
    await sql`
      delete from sessions s where s.identity_id = ${identityId}
        and not exists (select 1 from memberships m where m.identity_id = ${identityId} and m.deactivated_at is null)`;
    return loadMember(sql, p.workspaceId, identityId);
  },
});

/** POST /members/{identityId}/reactivate: access again with the same role and settings; revoked tokens stay revoked (new ones are made). */
export const reactivateMember = defineOp({
  name: 'members.reactivate',
  action: 'members.reactivate',
  input: memberInput,
  output: memberSchema,
  tx: true,
  audit: { action: 'member.reactivate', target: (sent) => `identity ${String(sent.identityId)}` },
  run: async (ctx, { identityId }) => {
    const { sql, principal: p } = ctx;
    const m = await loadMember(sql, p.workspaceId, identityId, true);
    if (m.role === 'owner' && p.role !== 'owner') throw forbidden('owner_only', undefined, 'Only an owner may reactivate an owner.');
    if (m.deactivatedAt)
      await sql`update memberships set deactivated_at = null, deactivated_by = null where workspace_id = ${p.workspaceId} and identity_id = ${identityId}`;
    return loadMember(sql, p.workspaceId, identityId);
  },
});
