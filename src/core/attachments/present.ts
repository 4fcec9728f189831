import type { Db } from '../../db/connect.ts';
import type { Audience } from '../access/permissions.ts';

/** The contract's Attachment; `uploadedBy` is {id, name} as on the TicketPage (tickets/page-sql.ts). */
export interface Attachment {
  id: string;
  filename: string;
  contentType: string;
  size: number;
  inline: boolean;
  audience: Audience;
  commentId: string | null;
  uploadedBy: { id: string; name: string } | null;
  createdAt: string;
}

export interface AttachmentRow extends Omit<Attachment, 'createdAt'> {
  createdAt: Date;
}

/** Select list (never the bytes) and joins for attachments aliased `a`. */
export function attachmentSelect(sql: Db) {
  return sql`
    select a.id, a.filename, a.content_type as "contentType", a.size, a.inline, a.audience, a.comment_id as "commentId",
           a.created_at as "createdAt",
           case when i.id is null then null else json_build_object('id', i.id, 'name', person_name(a.workspace_id, i.id, i.name)) end as "uploadedBy"
    from attachments a
    left join identities i on i.id = a.uploaded_by`;
}

export function presentAttachment(r: AttachmentRow): Attachment {
  return { ...r, createdAt: r.createdAt.toISOString() };
}
