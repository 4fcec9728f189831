import { z } from 'zod';
import { dateTimeOut, describing, uuidOut } from '../../response-schema.ts';
import type { Mailbox } from './present.ts';

/**
 * Response schemas of the intake mailbox (/mailbox, /mailbox/poll, /mailbox/messages), with the
 * intake log's entry type (here, not in the operation that declares it as output, so no circle).
 * The password is never in them.
 */

/** One message the intake read, and what became of it. */
export interface IntakeLogEntry {
  id: string;
  messageId: string | null;
  from: string | null;
  subject: string | null;
  receivedAt: string;
  status: 'imported' | 'reply' | 'ignored' | 'quarantined';
  /** Why it was ignored or quarantined: a code, then for failures the error text (`ticket_failed: ...`). */
  reason: string | null;
  /** What proved the sender, or did not (issue 19): `reply-token=valid`, `dkim=pass (d=acme.test) dmarc=pass`, `dkim=none dmarc=fail` ... */
  verdict: string | null;
  ticketId: string | null;
  commentId: string | null;
  /** The message's UID in the mailbox's folder (under the folder's UIDVALIDITY then): where to find a quarantined one. */
  uid: number | null;
}

export const mailboxSchema = describing<Mailbox>()(
  z
    .object({
      host: z.string(),
      port: z.number().int(),
      secure: z.boolean(),
      user: z.string(),
      folder: z.string(),
      afterImport: z.enum(['seen', 'move']),
      moveTo: z.string().nullable(),
      enabled: z.boolean(),
      trustedAuthservId: z.string().nullable(),
      uidValidity: z.number().int().nullable(),
      lastUid: z.number().int(),
      lastPollAt: dateTimeOut.nullable(),
      lastError: z.string().nullable(),
      counts: z.object({ imported: z.number().int(), replies: z.number().int(), ignored: z.number().int(), quarantined: z.number().int() }),
    })
    .meta({ id: 'Mailbox' }),
);

export const pollQueuedSchema = describing<{ queued: true }>()(z.object({ queued: z.literal(true) }).meta({ id: 'PollQueued' }));

export const intakeLogSchema = describing<{ items: IntakeLogEntry[]; nextCursor: string | null }>()(
  z
    .object({
      items: z.array(
        z.object({
          id: uuidOut,
          messageId: z.string().nullable(),
          from: z.string().nullable(),
          subject: z.string().nullable(),
          receivedAt: dateTimeOut,
          status: z.enum(['imported', 'reply', 'ignored', 'quarantined']),
          reason: z.string().nullable().describe('Why it was ignored or quarantined: a code, for failures followed by the error text.'),
          verdict: z
            .string()
            .nullable()
            .describe(
              'What proved the sender, or did not: `reply-token=valid`, `dkim=pass (d=acme.test) dmarc=pass`, `dkim=none dmarc=fail`; null when not judged.',
            ),
          ticketId: uuidOut.nullable(),
          commentId: uuidOut.nullable(),
          uid: z.number().int().nullable().describe("The message's IMAP UID in the mailbox folder: where to find a quarantined one."),
        }),
      ),
      nextCursor: z.string().nullable(),
    })
    .meta({ id: 'IntakeLog' }),
);
