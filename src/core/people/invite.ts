import { z } from 'zod';
import type { Db } from '../../db/connect.ts';
import { forbidden, conflict, invalid, notFound } from '../errors.ts';
import { isClientRole } from '../auth/principal.ts';
import type { Ctx } from '../ctx.ts';
import { isStorableString } from '../input.ts';
import { enqueue } from '../jobs/enqueue.ts';
import { invitationMailJob } from '../jobs/catalog.ts';
import { singleAddress } from '../mail/address.ts';
import { defineOp } from '../operation.ts';
import { INVITATION_DAYS, invitableRoles, invitationSchema, lockInvitation, type Invitation } from './invitation-view.ts';

export const createInvitationInput = z.object({
  email: z.string().trim().max(254).describe('The address the invitation is sent to: their login'),
  name: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .refine((s) => isStorableString(s) && !/\p{Cc}/u.test(s), 'No control characters.')
    .describe('Their name, as colleagues will see it'),
  role: z.enum(invitableRoles).describe('owner, admin, member (workspace users), client_elevated or client (client users)'),
  clientId: z.uuid().toLowerCase().nullable().default(null).describe('The client of a client user (client roles only)'),
});

export const expiryFrom = (now: Date) => new Date(now.getTime() + INVITATION_DAYS * 86_400_000);

/** A client role needs a client of this workspace, a workspace role none; only an Owner makes an Owner. */
export async function assertRoleAndClient(ctx: Ctx, role: string, clientId: string | null): Promise<void> {
  if (isClientRole(role as never) !== (clientId !== null)) {
    throw invalid('client_role_needs_client', { field: 'clientId' }, 'A client role needs the client; a workspace role takes none.');
  }
  if (role === 'owner' && ctx.principal.role !== 'owner') throw forbidden('owner_only', { field: 'role' }, 'Only an owner may make someone an owner.');
  if (clientId) {
    const [c] = await ctx.sql`select 1 from clients where id = ${clientId} and workspace_id = ${ctx.principal.workspaceId}`;
    if (!c) throw notFound('unknown_client', { field: 'clientId' }, 'No such client in this workspace.');
  }
}

/**
 * The pending invitation of this address, if any: an expired one is closed (revoked) so a new one
 * can take its place; a live one is 409 `invitation_pending` (resend it instead).
 */
async function closeStale(ctx: Ctx, sql: Db, email: string): Promise<void> {
  const { workspaceId } = ctx.principal;
  const [open] = await sql<{ id: string }[]>`
    select id from invitations where workspace_id = ${workspaceId} and lower(email) = lower(${email}) and accepted_at is null and revoked_at is null
    for update`;
  if (!open) return;
  const inv = await lockInvitation(sql, workspaceId, open.id, ctx.now());
  if (inv?.state === 'pending') throw conflict('invitation_pending', { invitationId: open.id }, 'This address already has a pending invitation: resend it.');
  await sql`update invitations set revoked_at = ${ctx.now()} where id = ${open.id}`;
}

/**
 * POST /invitations: invites a person by email as a workspace or client user. The email (with a
 * one-time link, valid 7 days) is sent by a job queued in the same transaction, through the same
 * mailer as deliveries; the answer never holds the link.
 */
export const createInvitation = defineOp({
  name: 'invitations.create',
  action: 'invitations.create',
  input: createInvitationInput,
  output: invitationSchema,
  tx: true,
  audit: { action: 'invitation.create', target: (sent) => `email ${String(sent.email)}`, detail: (input) => input.role },
  run: async (ctx, input): Promise<Invitation> => {
    const { sql, principal: p } = ctx;
    const email = singleAddress(input.email);
    if (!email) throw invalid('bad_address', { field: 'email' }, 'email must be exactly one bare email address.');
    await assertRoleAndClient(ctx, input.role, input.clientId);
    const [member] = await sql`
      select 1 from memberships m join identities i on i.id = m.identity_id
      where m.workspace_id = ${p.workspaceId} and lower(i.email) = lower(${email}) and m.deactivated_at is null`;
    if (member) throw conflict('already_member', { field: 'email' }, 'This person is already a member of the workspace.');
    await closeStale(ctx, sql, email);
    const now = ctx.now();
    const [row] = await sql<{ id: string }[]>`
      insert into invitations (workspace_id, email, name, role, client_id, invited_by, created_at, sent_at, expires_at)
      values (${p.workspaceId}, ${email}, ${input.name}, ${input.role}, ${input.clientId}, ${p.identityId}, ${now}, ${now}, ${expiryFrom(now)})
      returning id`;
    await enqueue(sql, invitationMailJob, { workspaceId: p.workspaceId, invitationId: row!.id });
    return (await lockInvitation(sql, p.workspaceId, row!.id, now))!;
  },
});

/**
 * The first Owner of a new workspace (`wt workspace create --owner`): an invitation from no one
 * (the machine's operator), the same row and email as createInvitation, so the Owner chooses a
 * password through the link rather than on a command line (shell history, the process list).
 * Checked before the workspace is made (`parseFirstOwner`), so a refused address leaves nothing.
 */
export const parseFirstOwner = (input: { email: string; name: string }) => {
  const parsed = createInvitationInput.pick({ email: true, name: true }).parse(input);
  const email = singleAddress(parsed.email);
  if (!email) throw invalid('bad_address', { field: 'email' }, 'The owner must be exactly one bare email address.');
  return { email, name: parsed.name };
};

export async function inviteFirstOwner(sql: Db, workspaceId: string, owner: { email: string; name: string }, now = new Date()): Promise<string> {
  return sql.begin(async (t) => {
    const tsql = t as unknown as Db;
    const [row] = await tsql<{ id: string }[]>`
      insert into invitations (workspace_id, email, name, role, client_id, invited_by, created_at, sent_at, expires_at)
      values (${workspaceId}, ${owner.email}, ${owner.name}, 'owner', null, null, ${now}, ${now}, ${expiryFrom(now)})
      returning id`;
    await enqueue(tsql, invitationMailJob, { workspaceId, invitationId: row!.id });
    return row!.id;
  });
}
