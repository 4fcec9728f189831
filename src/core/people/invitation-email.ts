import type { Db } from '../../db/connect.ts';
import { newOpaqueSecret, sha256 } from '../auth/secrets.ts';
import { jobTx, type JobCtx } from '../jobs/ctx.ts';
import { linkBase, sendLinkEmail } from '../mail/link-email.ts';
import type { OutgoingMail } from '../mail/mailer.ts';
import { newMessageId, workspaceSender } from '../mail/workspace-sender.ts';

/** The page an invitation link opens: the console's, which reads and accepts it through /api/auth/invitations/{token}. */
export const invitationLink = (base: string, secret: string) => `${base}/ops/join/${secret}`;

interface Claim {
  workspaceId: string;
  email: string;
  name: string;
  inviter: string | null;
  expiresAt: Date;
  secret: string;
  messageId: string;
}

/**
 * Under the invitation's lock: a pending invitation gets the secret of its link (only its hash is
 * stored, replacing the last one's) and the email's Message-ID; an accepted, revoked or expired one
 * gets no email.
 */
async function claim(sql: Db, invitationId: string, now: Date, mailFrom: string): Promise<Claim | null> {
  const [inv] = await sql<Omit<Claim, 'secret' | 'messageId'>[]>`
    select i.workspace_id as "workspaceId", i.email, i.name, i.expires_at as "expiresAt", p.name as inviter
    from invitations i left join identities p on p.id = i.invited_by
    where i.id = ${invitationId} and i.accepted_at is null and i.revoked_at is null and i.expires_at > ${now}
    for update of i`;
  if (!inv) return null;
  const secret = newOpaqueSecret();
  const messageId = newMessageId(mailFrom);
  await sql`update invitations set token_hash = ${sha256(secret)}, message_id = ${messageId} where id = ${invitationId}`;
  return { ...inv, secret, messageId };
}

/** The `invitations:send` job: one invitation's email, with a link that works once, until the invitation expires. */
export async function sendInvitationEmail(ctx: JobCtx, { invitationId }: { invitationId: string }): Promise<void> {
  const c = await jobTx(ctx, ({ sql }) => claim(sql, invitationId, ctx.now(), ctx.mailFrom));
  if (!c) return;
  const sender = await workspaceSender(ctx.sql, c.workspaceId, ctx.mailFrom);
  await sendLinkEmail(ctx, invitationEmail(c, sender, linkBase(ctx)));
}

function invitationEmail(c: Claim, sender: { from: string; replyTo: string | null; name: string }, base: string): OutgoingMail {
  const who = c.inviter ? `${c.inviter} invited you` : 'You are invited';
  return {
    from: sender.from,
    to: c.email,
    messageId: c.messageId,
    subject: `${who} to ${sender.name}`,
    text:
      `Hello ${c.name},\n\n${who} to join ${sender.name} on the work tracker.\n\n` +
      `Open this link to choose your password and start:\n${invitationLink(base, c.secret)}\n\n` +
      `The link works once, until ${c.expiresAt.toISOString().slice(0, 16).replace('T', ' ')} UTC. ` +
      `If you did not expect this email, ignore it.\n\n${sender.name}\n`,
    headers: { 'Auto-Submitted': 'auto-generated', ...(sender.replyTo ? { 'Reply-To': sender.replyTo } : {}) },
    attachments: [],
  };
}
