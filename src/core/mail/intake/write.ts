import { randomUUID } from 'node:crypto';
import type { Db } from '../../../db/connect.ts';
import { cleanContentType, cleanFilename } from '../../attachments/upload.ts';
import { recordEvents, type NewEvent } from '../../tickets/events.ts';
import { resolveWorkflow } from '../../tickets/fields.ts';
import { storedHtml } from '../../tickets/markdown.ts';
import { assignNumber } from '../../tickets/numbering.ts';
import type { Audience } from '../../access/permissions.ts';
import type { ParsedAttachment } from './parse.ts';

/**
 * The rows the intake writes for a message, the same rows POST /tickets, POST .../comments and
 * uploads write (source `email`), with their timeline events. The rules deciding whether to write
 * them are the intake's (import.ts), not a caller's permissions: the sender is no logged-in caller.
 */

export interface NewInboxTicket {
  workspaceId: string;
  /** Null: an unverified sender, attributed to no one. */
  reporterId: string | null;
  title: string;
  description: string;
}

/** An Inbox ticket with the workspace's inbound kind, default state and priority; `source` and `startedBy` are `email`. */
export async function insertInboxTicket(sql: Db, t: NewInboxTicket, now: Date): Promise<string> {
  const wf = await resolveWorkflow(sql, t.workspaceId, {});
  const ticketId = randomUUID();
  const number = await assignNumber(sql, t.workspaceId, null, ticketId);
  const html = storedHtml(t.description);
  await sql`
    insert into tickets (id, workspace_id, project_id, number, title, description, description_html, description_html_version,
                         kind_id, state_id, priority_id, reporter_id, source, started_by, closed_at, created_at, updated_at)
    values (${ticketId}, ${t.workspaceId}, null, ${number}, ${t.title}, ${t.description}, ${html.html}, ${html.version}, ${wf.kindId}, ${wf.stateId}, ${wf.priorityId},
            ${t.reporterId}, 'email', 'email', ${wf.stateCategory === 'closed' ? now : null}, ${now}, ${now})`;
  await recordEvents(sql, [{ workspaceId: t.workspaceId, ticketId, kind: 'created', actorId: t.reporterId }], now);
  return ticketId;
}

export interface NewMailComment {
  workspaceId: string;
  ticketId: string;
  authorId: string;
  audience: Audience;
  body: string;
}

/** A comment with source `email` and its `comment_added` event. The caller holds the ticket. */
export async function insertComment(sql: Db, c: NewMailComment, now: Date): Promise<string> {
  const html = storedHtml(c.body);
  const [row] = await sql<{ id: string }[]>`
    insert into comments (workspace_id, ticket_id, author_id, audience, body, body_html, body_html_version, source, created_at, updated_at)
    values (${c.workspaceId}, ${c.ticketId}, ${c.authorId}, ${c.audience}, ${c.body}, ${html.html}, ${html.version}, 'email', ${now}, ${now})
    returning id`;
  await recordEvents(
    sql,
    [{ workspaceId: c.workspaceId, ticketId: c.ticketId, kind: 'comment_added', actorId: c.authorId, payload: { commentId: row!.id, audience: c.audience } }],
    now,
  );
  return row!.id;
}

/** Stores the message's attachments on the ticket (and its comment), each with an `attachment_added` event. */
export async function insertAttachments(
  sql: Db,
  at: { workspaceId: string; ticketId: string; commentId: string | null; audience: Audience; uploadedBy: string | null },
  files: ParsedAttachment[],
  now: Date,
): Promise<void> {
  const events: NewEvent[] = [];
  for (const f of files) {
    const filename = cleanFilename(f.filename);
    const [row] = await sql<{ id: string }[]>`
      insert into attachments (workspace_id, ticket_id, comment_id, filename, content_type, size, inline, audience, data, uploaded_by, created_at)
      values (${at.workspaceId}, ${at.ticketId}, ${at.commentId}, ${filename}, ${cleanContentType(f.contentType)}, ${f.data.length}, ${f.inline},
              ${at.audience}, ${f.data}, ${at.uploadedBy}, ${now})
      returning id`;
    events.push({
      workspaceId: at.workspaceId,
      ticketId: at.ticketId,
      kind: 'attachment_added',
      actorId: at.uploadedBy,
      payload: { attachmentId: row!.id, filename, audience: at.audience },
    });
  }
  await recordEvents(sql, events, now);
}
