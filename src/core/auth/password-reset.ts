import { z } from 'zod';
import type { Db } from '../../db/connect.ts';
import { notFound } from '../errors.ts';
import { enqueue } from '../jobs/enqueue.ts';
import { resetMailJob } from '../jobs/catalog.ts';
import { definePublicOp } from '../operation.ts';
import { okSchema } from '../response-schema.ts';
import { newPassword } from './invitation-accept.ts';
import { hashPassword, sha256 } from './secrets.ts';
import type { LoginCtx } from './sessions.ts';

/** How long a reset link works. */
export const RESET_MINUTES = 60;

export const requestResetInput = z.object({ email: z.string().trim().min(3).max(320).describe('The login to reset') });
export const resetPasswordInput = z.object({
  token: z.string().min(1).max(100).describe('The secret of the link'),
  password: newPassword.describe('The new password, at least 10 characters'),
});
export const resetPasswordFields = resetPasswordInput.omit({ token: true });

/**
 * POST /api/auth/password-reset: answers the same whether or not the address has a login, so it
 * tells nobody who has one. Counted like a failed login (per email and per address, the same
 * throttle), so it cannot be used to flood a mailbox or to probe. A person with a login and an
 * active membership gets an email (sent by a job, through their oldest workspace, with its sender
 * name and reply-to) with a link valid one hour.
 */
export const requestPasswordReset = definePublicOp({
  name: 'auth.password_reset.request',
  input: requestResetInput,
  output: okSchema,
  // no `tx`: the throttle counts the attempt first, outside the transaction that makes the link
  run: async (ctx: LoginCtx, { email }): Promise<{ ok: true }> => {
    await ctx.guard?.guard.attempt(email, ctx.guard.address);
    await ctx.sql.begin(async (t) => {
      const sql = t as unknown as Db;
      const [who] = await sql<{ identityId: string; workspaceId: string }[]>`
        select i.id as "identityId", m.workspace_id as "workspaceId"
        from identities i join memberships m on m.identity_id = i.id and m.deactivated_at is null
        where lower(i.email) = lower(${email}) and i.kind = 'person' and i.password_hash is not null
        order by m.created_at, m.workspace_id limit 1`;
      if (!who) return;
      const now = ctx.now();
      const [row] = await sql<{ id: string }[]>`
        insert into password_resets (identity_id, workspace_id, created_at, expires_at)
        values (${who.identityId}, ${who.workspaceId}, ${now}, ${new Date(now.getTime() + RESET_MINUTES * 60_000)})
        returning id`;
      await enqueue(sql, resetMailJob, { workspaceId: who.workspaceId, resetId: row!.id });
    });
    return { ok: true };
  },
});

/**
 * POST /api/auth/password-reset/{token}: sets the new password, once; every other open link of the
 * person stops working and every session of theirs ends (whoever held one must log in again).
 */
export const resetPassword = definePublicOp({
  name: 'auth.password_reset.reset',
  input: resetPasswordInput,
  output: okSchema,
  // no `tx`: the password is hashed (scrypt, slow on purpose) before the transaction, not while it holds the lock
  run: async (ctx: Pick<LoginCtx, 'sql' | 'now'>, input): Promise<{ ok: true }> => {
    const passwordHash = await hashPassword(input.password);
    await ctx.sql.begin(async (t) => {
      const sql = t as unknown as Db;
      const now = ctx.now();
      const [reset] = await sql<{ id: string; identityId: string }[]>`
        select id, identity_id as "identityId" from password_resets
        where token_hash = ${sha256(input.token)} and used_at is null and expires_at > ${now}
        for update`;
      if (!reset) throw notFound('unknown_reset', undefined, 'This reset link is unknown, used or expired.');
      await sql`update identities set password_hash = ${passwordHash} where id = ${reset.identityId}`;
      await sql`update password_resets set used_at = ${now} where identity_id = ${reset.identityId} and used_at is null`;
      await sql`delete from sessions where identity_id = ${reset.identityId}`;
    });
    return { ok: true };
  },
});
