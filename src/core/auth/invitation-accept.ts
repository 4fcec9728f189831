import { z } from 'zod';
import type { Db } from '../../db/connect.ts';
import { conflict, forbidden, notFound } from '../errors.ts';
import { dateTimeOut, describing } from '../response-schema.ts';
import { addPerson } from '../people/users.ts';
import { definePublicOp } from '../operation.ts';
import { roles, type Role } from './principal.ts';
import { sha256, verifyPassword } from './secrets.ts';
import { openSession, type LoginCtx, type SessionInfo } from './sessions.ts';

/**
 * The invitee's side of an invitation (issue 22): no principal yet, so these run, like login, with
 * the database, the clock and the session lifetime; the link's secret is the credential.
 */

/** A new password: at least 10 characters (a passphrase), at most what scrypt is given elsewhere. */
export const newPassword = z.string().min(10).max(1000).describe('At least 10 characters');

export const invitationTokenInput = z.object({ token: z.string().min(1).max(100).describe('The secret of the link') });
export const acceptInvitationInput = invitationTokenInput.extend({
  password: newPassword.describe('The password to set (a new login), or the current one (someone who already has a login)'),
});
export const acceptInvitationFields = acceptInvitationInput.omit({ token: true });

/** What the invitation link shows before it is accepted. */
export interface InvitationPreview {
  email: string;
  name: string;
  role: Role;
  workspace: { slug: string; name: string };
  clientName: string | null;
  expiresAt: string;
  /** The address already has a login: accepting asks for its current password, not a new one. */
  hasLogin: boolean;
}

export const invitationPreviewSchema = describing<InvitationPreview>()(
  z
    .object({
      email: z.string(),
      name: z.string(),
      role: z.enum(roles),
      workspace: z.object({ slug: z.string(), name: z.string() }),
      clientName: z.string().nullable(),
      expiresAt: dateTimeOut,
      hasLogin: z.boolean().describe('Accepting asks for the current password of this login instead of setting one.'),
    })
    .meta({ id: 'InvitationPreview' }),
);

interface Pending {
  id: string;
  workspaceId: string;
  email: string;
  name: string;
  role: Role;
  clientId: string | null;
  slug: string;
  workspaceName: string;
  clientName: string | null;
  expiresAt: Date;
  identityId: string | null;
  passwordHash: string | null;
  identityKind: string | null;
  defaultTimezone: string;
  defaultWeeklyTargetMinutes: number | null;
}

const gone = () => notFound('unknown_invitation', undefined, 'This invitation link is unknown, used, revoked or expired.');

async function pending(sql: Db, token: string, now: Date, lock: boolean): Promise<Pending> {
  const [row] = await sql<Pending[]>`
    select i.id, i.workspace_id as "workspaceId", i.email, i.name, i.role, i.client_id as "clientId", w.slug, w.name as "workspaceName",
           c.name as "clientName", i.expires_at as "expiresAt", p.id as "identityId", p.password_hash as "passwordHash", p.kind as "identityKind",
           w.default_timezone as "defaultTimezone", w.default_weekly_target_minutes as "defaultWeeklyTargetMinutes"
    from invitations i
    join workspaces w on w.id = i.workspace_id
    left join clients c on c.id = i.client_id
    left join identities p on lower(p.email) = lower(i.email)
    where i.token_hash = ${sha256(token)} and i.accepted_at is null and i.revoked_at is null and i.expires_at > ${now}
    ${lock ? sql`for update of i` : sql``}`;
  if (!row) throw gone();
  return row;
}

/** GET /api/auth/invitations/{token}: what the link invites to (404 `unknown_invitation` once used, revoked or expired). */
export const previewInvitation = definePublicOp({
  name: 'auth.invitation.preview',
  input: invitationTokenInput,
  output: invitationPreviewSchema,
  run: async (ctx: Pick<LoginCtx, 'sql' | 'now'>, { token }): Promise<InvitationPreview> => {
    const p = await pending(ctx.sql, token, ctx.now(), false);
    return {
      email: p.email,
      name: p.name,
      role: p.role,
      workspace: { slug: p.slug, name: p.workspaceName },
      clientName: p.clientName,
      expiresAt: p.expiresAt.toISOString(),
      hasLogin: p.passwordHash !== null,
    };
  },
});

/**
 * POST /api/auth/invitations/{token}/accept: joins the workspace with the invited role (and the
 * workspace's default time zone and weekly target) and starts a session. A new login sets its
 * password here; someone who already has a login proves it with their current password (403
 * `wrong_password`; their password is never replaced by an invitation). The link works once.
 */
export const acceptInvitation = definePublicOp({
  name: 'auth.invitation.accept',
  input: acceptInvitationInput,
  // the result carries the new session's secret, which the door sets as the cookie (the body is its `info`)
  output: null,
  tx: true,
  run: async (ctx: LoginCtx, input): Promise<{ secret: string; expiresAt: Date; info: SessionInfo }> => {
    const { sql } = ctx;
    const now = ctx.now();
    const inv = await pending(sql, input.token, now, true);
    if (inv.identityKind === 'agent') throw conflict('address_taken', undefined, 'This address belongs to an agent account.');
    if (inv.passwordHash !== null) {
      await ctx.guard?.guard.attempt(inv.email, ctx.guard.address);
      if (!(await verifyPassword(input.password, inv.passwordHash))) throw forbidden('wrong_password', undefined, 'The password is wrong.');
      await ctx.guard?.guard.succeeded(inv.email, ctx.guard.address);
    }
    const identityId = await addPerson(sql, {
      workspaceId: inv.workspaceId,
      email: inv.email,
      name: inv.name,
      role: inv.role,
      clientId: inv.clientId,
      password: inv.passwordHash === null ? input.password : null,
      timezone: inv.defaultTimezone,
      weeklyTargetMinutes: inv.defaultWeeklyTargetMinutes,
    });
    // invited back after a deactivation: the invitation is the Owner's or Admin's word that they return
    await sql`update memberships set deactivated_at = null, deactivated_by = null where workspace_id = ${inv.workspaceId} and identity_id = ${identityId}`;
    await sql`update invitations set accepted_at = ${now}, accepted_by = ${identityId} where id = ${inv.id}`;
    return openSession(ctx, identityId);
  },
});
