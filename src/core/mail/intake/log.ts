import { z } from 'zod';
import { authorize } from '../../access/authorize.ts';
import type { Ctx } from '../../ctx.ts';
import { badCursor, decodeCursor, encodeCursor, isMicrosTimestamp } from '../../tickets/cursor.ts';
import { UUID_PATTERN } from '../../validation.ts';

export const listIntakeInput = z.object({
  status: z.enum(['imported', 'reply', 'ignored', 'quarantined']).optional().describe('Only messages with this outcome.'),
  cursor: z.string().max(200).optional().describe('nextCursor of the previous page.'),
  limit: z.coerce.number().int().min(1).max(100).default(50).describe('Page size, 1-100 (default 50).'),
});

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

const KIND = 'intake';

/** GET /mailbox/messages: the intake log, newest first, keyset-paged by (receivedAt, id). */
export async function listIntakeMessages(ctx: Ctx, input: unknown): Promise<{ items: IntakeLogEntry[]; nextCursor: string | null }> {
  authorize(ctx, 'mailbox.messages');
  const q = listIntakeInput.parse(input ?? {});
  let after: [string, string] | null = null;
  if (q.cursor !== undefined) {
    const [at, id] = decodeCursor(q.cursor, KIND, 2) as [string, string];
    if (!isMicrosTimestamp(at) || !UUID_PATTERN.test(id)) throw badCursor();
    after = [at, id];
  }
  const { sql, principal: p } = ctx;
  const rows = await sql<(Omit<IntakeLogEntry, 'receivedAt'> & { receivedAt: Date; at: string })[]>`
    select id, message_id as "messageId", from_address as from, subject, received_at as "receivedAt", status, reason, verdict,
           ticket_id as "ticketId", comment_id as "commentId", uid::float8 as uid,
           to_char(received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as at
    from intake_messages
    where workspace_id = ${p.workspaceId}
      ${q.status ? sql`and status = ${q.status}` : sql``}
      ${after ? sql`and (received_at, id) < (${after[0]}::text::timestamp at time zone 'UTC', ${after[1]}::uuid)` : sql``}
    order by received_at desc, id desc
    limit ${q.limit + 1}`;
  const page = rows.slice(0, q.limit);
  const last = page.at(-1);
  return {
    items: page.map(({ at: _at, receivedAt, ...r }) => ({ ...r, receivedAt: receivedAt.toISOString() })),
    nextCursor: rows.length > q.limit && last ? encodeCursor(KIND, [last.at, last.id]) : null,
  };
}
