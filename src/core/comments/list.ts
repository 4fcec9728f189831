import { z } from 'zod';
import { badCursor } from '../tickets/cursor.ts';
import { loadTicket } from '../tickets/load.ts';
import { ticketPermissions } from '../access/permissions.ts';
import { ticketRef } from '../tickets/schemas.ts';
import { UUID_PATTERN } from '../validation.ts';
import { defineOp } from '../operation.ts';
import { commentSelect, presentComment, type CommentRow } from './present.ts';
import { commentPageSchema, type CommentPage } from './schema.ts';

/** The largest page of comments (also the default). */
export const COMMENT_PAGE_MAX = 50;

export const listCommentsQuery = z.object({
  cursor: z.string().max(200).optional().describe('nextCursor of the previous page; omit for the first page'),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(COMMENT_PAGE_MAX)
    .default(COMMENT_PAGE_MAX)
    .describe(`Page size, 1–${COMMENT_PAGE_MAX} (default ${COMMENT_PAGE_MAX})`),
});
export const listCommentsInput = listCommentsQuery.extend({ ref: ticketRef });

const SORT_KEY = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/**
 * The cursor is opaque to clients: base64url of the last comment's creation time (microseconds,
 * as text: a timestamptz parameter would pass through a JS Date and lose them) and id.
 */
function encodeCursor(r: CommentRow): string {
  return Buffer.from(JSON.stringify([r.sortKey, r.id])).toString('base64url');
}

function decodeCursor(raw: string): { at: string; id: string } {
  try {
    const v: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && SORT_KEY.test(v[0]) && typeof v[1] === 'string' && UUID_PATTERN.test(v[1])) {
      return { at: v[0], id: v[1] };
    }
  } catch {
    // falls through to the error below
  }
  throw badCursor();
}

/**
 * GET /tickets/{ref}/comments: the comments the caller may read (client users: `client` only),
 * oldest first, in pages of at most 50 with a keyset cursor on (createdAt, id), like the ticket lists.
 */
export const listComments = defineOp({
  name: 'comments.list',
  action: 'comments.list',
  input: listCommentsInput,
  output: commentPageSchema,
  run: async (ctx, { ref, cursor, limit }): Promise<CommentPage> => {
    const after = cursor === undefined ? null : decodeCursor(cursor);
    const { sql, principal: p } = ctx;
    const t = await loadTicket(ctx, ref);
    const readable = ticketPermissions(p, t).read;
    const rows = await sql<CommentRow[]>`
    ${commentSelect(sql)}
    where c.ticket_id = ${t.id} and c.audience = any(${readable}::text[])
      ${after ? sql`and (c.created_at, c.id) > (${after.at}::text::timestamptz, ${after.id}::uuid)` : sql``}
    order by c.created_at, c.id
    limit ${limit + 1}`;
    const page = rows.slice(0, limit);
    return { items: page.map(presentComment), nextCursor: rows.length > limit ? encodeCursor(page[page.length - 1]!) : null };
  },
});
