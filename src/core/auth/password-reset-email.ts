import type { Db } from '../../db/connect.ts';
import { jobTx, type JobCtx } from '../jobs/ctx.ts';
import { linkBase, sendLinkEmail } from '../mail/link-email.ts';
import { newMessageId, workspaceSender } from '../mail/workspace-sender.ts';
import { newOpaqueSecret, sha256 } from './secrets.ts';

/** The page a reset link opens: the console's, which sets the password through /api/auth/password-reset/{token}. */
export const resetLink = (base: string, secret: string) => `${base}/ops/reset/${secret}`;

interface Claim {
  email: string;
  name: string;
  expiresAt: Date;
  secret: string;
  messageId: string;
}

/** Under the reset's lock: an unused, unexpired one gets its link's secret (stored hashed) and the email's Message-ID. */
async function claim(sql: Db, resetId: string, now: Date, mailFrom: string): Promise<Claim | null> {
  const [r] = await sql<Omit<Claim, 'secret' | 'messageId'>[]>`
    select i.email, i.name, r.expires_at as "expiresAt"
    from password_resets r join identities i on i.id = r.identity_id
    where r.id = ${resetId} and r.used_at is null and r.expires_at > ${now} and i.email is not null
    for update of r`;
  if (!r) return null;
  const secret = newOpaqueSecret();
  const messageId = newMessageId(mailFrom);
  await sql`update password_resets set token_hash = ${sha256(secret)}, message_id = ${messageId} where id = ${resetId}`;
  return { ...r, secret, messageId };
}

/** The `resets:send` job: one reset link's email. */
export async function sendResetEmail(ctx: JobCtx, { workspaceId, resetId }: { workspaceId: string; resetId: string }): Promise<void> {
  const c = await jobTx(ctx, ({ sql }) => claim(sql, resetId, ctx.now(), ctx.mailFrom));
  if (!c) return;
  const sender = await workspaceSender(ctx.sql, workspaceId, ctx.mailFrom);
  await sendLinkEmail(ctx, {
    from: sender.from,
    to: c.email,
    messageId: c.messageId,
    subject: 'Reset your password',
    text:
      `Hello ${c.name},\n\nsomeone (we hope you) asked to reset the password of your work tracker login.\n\n` +
      `Open this link to choose a new one:\n${resetLink(linkBase(ctx), c.secret)}\n\n` +
      `The link works once, until ${c.expiresAt.toISOString().slice(0, 16).replace('T', ' ')} UTC. ` +
      `If you did not ask for it, ignore this email: your password stays as it is.\n\n${sender.name}\n`,
    headers: { 'Auto-Submitted': 'auto-generated', ...(sender.replyTo ? { 'Reply-To': sender.replyTo } : {}) },
    attachments: [],
  });
}
