import { conflict, notFound } from '../errors.ts';
import { defineOp } from '../operation.ts';
import { invitationSchema, lockInvitation } from './invitation-view.ts';
import { invitationIdInput } from './resend-invitation.ts';

/** DELETE /invitations/{id}: the link stops working at once; revoking a revoked one again changes nothing, an accepted one is 409. */
export const revokeInvitation = defineOp({
  name: 'invitations.revoke',
  action: 'invitations.revoke',
  input: invitationIdInput,
  output: invitationSchema,
  tx: true,
  audit: { action: 'invitation.revoke', target: (sent) => `invitation ${String(sent.id)}` },
  run: async (ctx, { id }) => {
    const { sql, principal: p } = ctx;
    const now = ctx.now();
    const inv = await lockInvitation(sql, p.workspaceId, id, now);
    if (!inv) throw notFound('unknown_invitation', undefined, 'No such invitation.');
    if (inv.state === 'accepted') throw conflict('invitation_closed', { state: inv.state }, 'The invitation was accepted: deactivate the member instead.');
    if (inv.state !== 'revoked') await sql`update invitations set revoked_at = ${now} where id = ${id}`;
    return (await lockInvitation(sql, p.workspaceId, id, now))!;
  },
});
