import { z } from 'zod';
import { authorize } from '../access/authorize.ts';
import { parseUuid } from '../validation.ts';
import { isAdminRole } from '../auth/principal.ts';
import { tx, type Ctx } from '../ctx.ts';
import { forbidden, notFound } from '../errors.ts';
import { recordEvent } from '../tickets/events.ts';
import { loadTicket } from '../tickets/load.ts';
import { ticketPermissions, type TicketPermissions } from '../tickets/permissions.ts';
import { applyMentions, assertCanWrite, commentAudience, commentBody, commentMentions } from './create.ts';
import { findComment, presentComment, type Comment, type CommentRow } from './present.ts';

export const editCommentInput = z
  .object({
    body: commentBody.optional().describe('New Markdown text, 1–50,000 characters'),
    audience: commentAudience.optional().describe('New audience; attachments of the comment follow it'),
    mentions: commentMentions.optional(),
  })
  .refine((v) => v.body !== undefined || v.audience !== undefined, { message: 'Send body or audience.', path: ['body'] });

/** The comment, when it is on this ticket and the caller may read its audience; else 404. */
async function readableComment(ctx: Ctx, ticketId: string, perms: TicketPermissions, commentId: string): Promise<CommentRow> {
  const c = await findComment(ctx.sql, ticketId, commentId, { lock: true });
  if (!c || !perms.read.includes(c.audience)) throw notFound('unknown_comment', { field: 'commentId' }, 'No such comment on this ticket.');
  return c;
}

/**
 * PATCH /tickets/{ref}/comments/{id}: the author only, with the posting rules: the old and the
 * new audience must both be writable by the caller, and mentions apply as on a new comment.
 * An edit that changes nothing writes nothing.
 */
export async function editComment(ctx: Ctx, ref: string, rawCommentId: string, input: unknown): Promise<Comment> {
  authorize(ctx, 'comments.edit');
  const commentId = parseUuid(rawCommentId, 'commentId');
  const data = editCommentInput.parse(input);
  return tx(ctx, async (ctx) => {
    const { sql, principal: p } = ctx;
    const t = await loadTicket(ctx, ref, { lock: true });
    const perms = ticketPermissions(p, t);
    const c = await readableComment(ctx, t.id, perms, commentId);
    if (c.authorId !== p.identityId) throw forbidden('not_author', undefined, 'Only the author may edit a comment.');
    assertCanWrite(perms, c.audience);
    const audience = data.audience ?? c.audience;
    assertCanWrite(perms, audience);
    await applyMentions(ctx, t, audience, data.mentions ?? []);
    const body = data.body ?? c.body;
    if (body === c.body && audience === c.audience) return presentComment(c);
    const now = ctx.now();
    await sql`update comments set body = ${body}, audience = ${audience}, updated_at = greatest(${now}, created_at + interval '1 millisecond') where id = ${c.id}`;
    if (audience !== c.audience) await sql`update attachments set audience = ${audience} where comment_id = ${c.id}`;
    await recordEvent(
      sql,
      { workspaceId: p.workspaceId, ticketId: t.id, kind: 'comment_edited', actorId: p.identityId, payload: { commentId: c.id, audience } },
      now,
    );
    return presentComment((await findComment(sql, t.id, c.id))!);
  });
}

/**
 * DELETE /tickets/{ref}/comments/{id}: the author, or an Owner or Admin (moderation). The
 * comment's attachments go with it.
 */
export async function deleteComment(ctx: Ctx, ref: string, rawCommentId: string): Promise<{ ok: true }> {
  authorize(ctx, 'comments.delete');
  const commentId = parseUuid(rawCommentId, 'commentId');
  return tx(ctx, async (ctx) => {
    const { sql, principal: p } = ctx;
    const t = await loadTicket(ctx, ref, { lock: true });
    const perms = ticketPermissions(p, t);
    const c = await readableComment(ctx, t.id, perms, commentId);
    if (c.authorId !== p.identityId && !isAdminRole(p.role))
      throw forbidden('not_author', undefined, 'Only the author or an owner or admin may delete a comment.');
    await sql`delete from comments where id = ${c.id}`;
    await recordEvent(
      sql,
      { workspaceId: p.workspaceId, ticketId: t.id, kind: 'comment_deleted', actorId: p.identityId, payload: { commentId: c.id, audience: c.audience } },
      ctx.now(),
    );
    return { ok: true };
  });
}
