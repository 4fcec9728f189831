import { z } from 'zod';
import { idField, withReasons } from '../validation.ts';
import { defineOp } from '../operation.ts';
import { isAppError, notFound } from '../errors.ts';
import { loadTicket } from '../tickets/load.ts';
import { ticketPermissions, type Audience } from '../access/permissions.ts';

/** Image types a browser renders without running anything; only these are ever served inline. */
const INLINE_SAFE = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif']);

/**
 * Types a browser may treat as an active document (markup, scripts, SVG, XML and its
 * stylesheets, Flash, multipart streams): never served under their own type.
 */
const RISKY = /html|xml|svg|javascript|ecmascript|jscript|^text\/xsl$|^application\/x-shockwave-flash$|^multipart\/|^application\/wasm$/;

export function isRiskyType(contentType: string): boolean {
  return RISKY.test(contentType);
}

/** GET /attachments/{id}/download: the path id is the input's `attachmentId`. */
const downloadAttachmentInput = withReasons(z.object({ attachmentId: idField('The attachment id.') }), { attachmentId: 'bad_uuid' });

export interface AttachmentDownload {
  data: Buffer;
  /** The stored type, or application/octet-stream for a risky one. */
  contentType: string;
  /** Inline only for a safe image uploaded as inline. */
  disposition: 'inline' | 'attachment';
  filename: string;
}

/**
 * GET /attachments/{id}/download. The attachment's ticket must be visible and its audience (and
 * its comment's, when it is on one) readable by the caller; anything else is the same 404. Headers follow the document download:
 * stored type (risky types become application/octet-stream), inline only for a safe image
 * uploaded as inline, an RFC 6266/5987 filename, no caching, no sniffing, a sandboxing CSP.
 */
export const downloadAttachment = defineOp({
  name: 'attachments.download',
  action: 'attachments.download',
  input: downloadAttachmentInput,
  // a file, not JSON: the route shapes its headers from the result
  output: null,
  run: async (ctx, { attachmentId }): Promise<AttachmentDownload> => {
    const { sql, principal: p } = ctx;
    const [meta] = await sql<{ ticketId: string; audience: Audience; commentAudience: Audience | null }[]>`
    select a.ticket_id as "ticketId", a.audience, c.audience as "commentAudience"
    from attachments a left join comments c on c.id = a.comment_id
    where a.id = ${attachmentId} and a.workspace_id = ${p.workspaceId}`;
    if (!meta) throw notFound(undefined, undefined, 'No such attachment.');
    const t = await loadTicket(ctx, meta.ticketId).catch((e: unknown) => {
      if (isAppError(e) && e.code === 'not_found') return null;
      throw e;
    });
    const readable = t ? ticketPermissions(p, t).read : [];
    if (!readable.includes(meta.audience) || (meta.commentAudience !== null && !readable.includes(meta.commentAudience))) {
      throw notFound(undefined, undefined, 'No such attachment.');
    }
    const [a] = await sql<{ filename: string; contentType: string; inline: boolean; data: Buffer }[]>`
    select filename, content_type as "contentType", inline, data from attachments where id = ${attachmentId}`;
    if (!a) throw notFound(undefined, undefined, 'No such attachment.');
    const risky = isRiskyType(a.contentType);
    const inline = a.inline && !risky && INLINE_SAFE.has(a.contentType);
    return {
      data: a.data,
      contentType: risky ? 'application/octet-stream' : a.contentType,
      disposition: inline ? 'inline' : 'attachment',
      filename: a.filename,
    };
  },
});
