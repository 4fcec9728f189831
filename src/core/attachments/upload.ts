import { z } from 'zod';
import { authorize } from '../access/authorize.ts';
import { AppError, forbidden, invalid, notFound } from '../errors.ts';
import { findComment } from '../comments/present.ts';
import { holdTickets } from '../tickets/concurrency.ts';
import { recordEvent } from '../tickets/events.ts';
import { loadTicket } from '../tickets/load.ts';
import { defaultAudience, readableAudiences } from '../access/permissions.ts';
import { ticketRef } from '../tickets/schemas.ts';
import { defineOp } from '../operation.ts';
import { attachmentSchema } from '../tickets/page-schema.ts';
import { attachmentSelect, presentAttachment, type Attachment, type AttachmentRow } from './present.ts';

export const MAX_ATTACHMENT_BYTES = 25 * 1024 * 1024;

/** The form fields beside the `file` part (multipart sends text; booleans are accepted too). */
export const uploadAttachmentFields = z.object({
  audience: z
    .enum(['internal', 'client'])
    .optional()
    .describe(
      'Who may download it: "internal" (workspace users) or "client" (everyone who sees the ticket). Default: the comment\'s audience, else your default audience',
    ),
  commentId: z.uuid().optional().describe("Attach to this comment of yours on the same ticket; the attachment then has the comment's audience"),
  inline: z
    .union([z.boolean(), z.stringbool()])
    .optional()
    .describe('Show inline (images only: png, jpeg, gif, webp, avif); otherwise it is offered as a download'),
});

export interface UploadedFile {
  filename: string | null | undefined;
  contentType: string | null | undefined;
  data: Buffer;
}

/** The operation's input: the ticket, the form fields and the file part (null when none was sent: 400 `file_required`). */
export const uploadAttachmentInput = uploadAttachmentFields.extend({
  ref: ticketRef,
  file: z.custom<UploadedFile>((v) => v !== null && typeof v === 'object' && Buffer.isBuffer((v as UploadedFile).data)).nullable(),
});

/** The last path segment, without control characters, at most 255 characters; "file" when nothing is left. */
export function cleanFilename(raw: string | null | undefined): string {
  const base = (raw ?? '').split(/[\\/]/).pop() ?? '';
  const cleaned = Array.from(base.normalize('NFC').replace(/[\u0000-\u001f\u007f-\u009f]/g, ''))
    .slice(0, 255)
    .join('')
    .trim();
  return cleaned === '' || cleaned === '.' || cleaned === '..' ? 'file' : cleaned;
}

/** The declared media type without parameters, lower-cased; anything malformed is application/octet-stream. */
export function cleanContentType(raw: string | null | undefined): string {
  const essence = (raw ?? '').split(';')[0]!.trim().toLowerCase();
  return essence.length <= 127 && /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/.test(essence) ? essence : 'application/octet-stream';
}

/**
 * POST /tickets/{ref}/attachments. Uploading is part of the conversation, so it needs the same
 * right as commenting at the attachment's audience. With `commentId` the comment must be the
 * caller's own on this ticket, and the attachment takes the comment's audience (a different
 * one is 400 `audience_mismatch`). The bytes are stored in PostgreSQL.
 */
export const uploadAttachment = defineOp({
  name: 'attachments.upload',
  action: 'attachments.upload',
  input: uploadAttachmentInput,
  output: attachmentSchema,
  tx: true,
  run: async (ctx, { ref, file, ...input }): Promise<Attachment> => {
    if (!file) throw invalid('file_required', { field: 'file' }, 'Send the file as a multipart part named "file".');
    if (file.data.length > MAX_ATTACHMENT_BYTES) {
      throw new AppError('payload_too_large', 'An attachment is at most 25 MB.', { reason: 'file_too_large', max: MAX_ATTACHMENT_BYTES });
    }
    const { sql, principal: p } = ctx;
    const t = await loadTicket(ctx, ref);
    // Also keeps `commentId` alive: comment edits and deletes lock the ticket row first, so they wait too.
    await holdTickets(sql, [t.id]);
    let audience = input.audience;
    const commentId = input.commentId?.toLowerCase() ?? null;
    if (commentId) {
      const c = await findComment(sql, t.id, commentId);
      if (!c || !readableAudiences(p).includes(c.audience)) throw notFound('unknown_comment', { field: 'commentId' }, 'No such comment on this ticket.');
      if (c.authorId !== p.identityId) throw forbidden('not_author', { field: 'commentId' }, 'Only the author may attach files to a comment.');
      if (audience && audience !== c.audience) {
        throw invalid('audience_mismatch', { field: 'audience' }, `An attachment on this comment has the comment's audience (${c.audience}).`);
      }
      audience = c.audience;
    }
    audience ??= defaultAudience(p);
    authorize(ctx, 'attachments.upload', t, { audience });

    const filename = cleanFilename(file.filename);
    const now = ctx.now();
    const [row] = await sql<{ id: string }[]>`
      insert into attachments (workspace_id, ticket_id, comment_id, filename, content_type, size, inline, audience, data, uploaded_by, created_at)
      values (${p.workspaceId}, ${t.id}, ${commentId}, ${filename}, ${cleanContentType(file.contentType)}, ${file.data.length}, ${input.inline ?? false},
              ${audience}, ${file.data}, ${p.identityId}, ${now})
      returning id`;
    await recordEvent(
      sql,
      { workspaceId: p.workspaceId, ticketId: t.id, kind: 'attachment_added', actorId: p.identityId, payload: { attachmentId: row!.id, filename, audience } },
      now,
    );
    const [created] = await sql<AttachmentRow[]>`${attachmentSelect(sql)} where a.id = ${row!.id}`;
    return presentAttachment(created!);
  },
});
