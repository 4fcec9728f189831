import type { JobCtx } from '../jobs/ctx.ts';
import type { OutgoingMail, SendResult } from './mailer.ts';

/** Where the links of the service's emails point: PUBLIC_URL (never a request's Host header). */
export const linkBase = (ctx: Pick<JobCtx, 'publicUrl'>) => (ctx.publicUrl ?? 'http://localhost:3000').replace(/\/+$/, '');

/**
 * Sends one email carrying a one-time link (an invitation, a password reset). A refusal or a
 * temporary failure throws, so graphile-worker retries with backoff (each attempt makes a new link
 * and the old one stops working) until its last attempt, recorded as failed in job_history. A
 * connection lost after the data was sent may have delivered it: not sent again automatically,
 * as with deliveries (an Owner or Admin resends an invitation; a person asks for another reset).
 */
export async function sendLinkEmail(ctx: JobCtx, mail: OutgoingMail): Promise<void> {
  const result = await ctx.mailer
    .send(mail)
    .catch((err: unknown): SendResult => ({ outcome: 'unknown', reply: err instanceof Error ? err.message : String(err) }));
  if (result.outcome === 'accepted') return;
  if (result.outcome === 'unknown') {
    ctx.log.warn({ messageId: mail.messageId, reply: result.reply }, 'the connection broke after the message was sent; not sent again');
    return;
  }
  throw new Error(`The email to ${mail.to} was not accepted: ${result.reply}`);
}
