import { z } from 'zod';
import { defineOp } from '../../operation.ts';
import { badCursor, decodeCursor, encodeCursor, isMicrosTimestamp } from '../../tickets/cursor.ts';
import { UUID_PATTERN } from '../../validation.ts';
import { intakeLogSchema, type IntakeLogEntry } from './schema.ts';

export const listIntakeInput = z.object({
  status: z.enum(['imported', 'reply', 'ignored', 'quarantined']).optional().describe('Only messages with this outcome.'),
  cursor: z.string().max(200).optional().describe('nextCursor of the previous page.'),
  limit: z.coerce.number().int().min(1).max(100).default(50).describe('Page size, 1-100 (default 50).'),
});

export type { IntakeLogEntry } from './schema.ts';

const KIND = 'intake';

/** GET /mailbox/messages: the intake log, newest first, keyset-paged by (receivedAt, id). */
export const listIntakeMessages = defineOp({
  name: 'mailbox.messages',
  action: 'mailbox.messages',
  input: listIntakeInput,
  output: intakeLogSchema,
  run: async (ctx, q): Promise<{ items: IntakeLogEntry[]; nextCursor: string | null }> => {
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
  },
});
