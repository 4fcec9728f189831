import { z } from 'zod';
import { conflict, notFound } from '../errors.ts';
import { invitationMailJob } from '../jobs/catalog.ts';
import { enqueue } from '../jobs/enqueue.ts';
import { defineOp } from '../operation.ts';
import { idField, withReasons } from '../validation.ts';
import { expiryFrom } from './invite.ts';
import { invitationSchema, lockInvitation } from './invitation-view.ts';

export const invitationIdInput = withReasons(z.object({ id: idField('The invitation id.') }), { id: 'bad_uuid' });

/**
 * POST /invitations/{id}/resend: a new email with a new link (the old link stops working at once)
 * and seven more days; an expired invitation may be resent, an accepted or revoked one not.
 */
export const resendInvitation = defineOp({
  name: 'invitations.resend',
  action: 'invitations.resend',
  input: invitationIdInput,
  output: invitationSchema,
  tx: true,
  audit: { action: 'invitation.resend', target: (sent) => `invitation ${String(sent.id)}` },
  run: async (ctx, { id }) => {
    const { sql, principal: p } = ctx;
    const now = ctx.now();
    const inv = await lockInvitation(sql, p.workspaceId, id, now);
    if (!inv) throw notFound('unknown_invitation', undefined, 'No such invitation.');
    if (inv.state === 'accepted' || inv.state === 'revoked') throw conflict('invitation_closed', { state: inv.state }, `The invitation is ${inv.state}.`);
    await sql`update invitations set token_hash = null, message_id = null, sent_at = ${now}, expires_at = ${expiryFrom(now)} where id = ${id}`;
    // afresh: a job still waiting is reset, and one running or spent gives way to a new one
    await enqueue(sql, invitationMailJob, { workspaceId: p.workspaceId, invitationId: id }, { fresh: true });
    return (await lockInvitation(sql, p.workspaceId, id, now))!;
  },
});
