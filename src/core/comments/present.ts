import type { Db } from '../../db/connect.ts';
import { renderMarkdown } from '../tickets/markdown.ts';
import type { Audience } from '../access/permissions.ts';

import type { PersonRef } from '../tickets/summary.ts';

/** A comment as the API shows it. `edited` is true once the body or audience changed after posting. */
export interface Comment {
  id: string;
  body: string;
  bodyHtml: string;
  audience: Audience;
  author: PersonRef | null;
  source: 'ui' | 'email' | 'api' | 'mcp' | 'codehost';
  createdAt: string;
  updatedAt: string;
  edited: boolean;
}

export interface CommentRow {
  id: string;
  ticketId: string;
  body: string;
  audience: Audience;
  authorId: string | null;
  author: PersonRef | null;
  source: Comment['source'];
  createdAt: Date;
  updatedAt: Date;
  /** created_at in full (microsecond) precision, for cursors. */
  sortKey: string;
}

/**
 * Select list and joins for comments aliased `c`: the author's name and client come from the
 * author's membership of the comment's workspace (null once the identity is gone).
 */
export function commentSelect(sql: Db) {
  return sql`
    select c.id, c.ticket_id as "ticketId", c.body, c.audience, c.author_id as "authorId", c.source,
           c.created_at as "createdAt", c.updated_at as "updatedAt",
           to_char(c.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as "sortKey",
           case when i.id is null then null else json_build_object('id', i.id, 'name', person_name(c.workspace_id, i.id, i.name), 'clientName', cl.name) end as author
    from comments c
    left join identities i on i.id = c.author_id
    left join memberships am on am.workspace_id = c.workspace_id and am.identity_id = c.author_id
    left join clients cl on cl.id = am.client_id`;
}

export function presentComment(r: CommentRow): Comment {
  return {
    id: r.id,
    body: r.body,
    bodyHtml: renderMarkdown(r.body),
    audience: r.audience,
    author: r.author,
    source: r.source,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
    edited: r.updatedAt.getTime() > r.createdAt.getTime(),
  };
}

/** One comment of a ticket by id, locked for a change when asked; any audience (callers check). */
export async function findComment(sql: Db, ticketId: string, commentId: string, opts: { lock?: boolean } = {}): Promise<CommentRow | undefined> {
  const [row] = await sql<
    CommentRow[]
  >`${commentSelect(sql)} where c.id = ${commentId} and c.ticket_id = ${ticketId} ${opts.lock ? sql`for update of c` : sql``}`;
  return row;
}
