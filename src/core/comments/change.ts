import { z } from 'zod';
import { authorize } from '../access/authorize.ts';
import { isAdminRole, type Principal } from '../auth/principal.ts';
import type { Ctx } from '../ctx.ts';
import { forbidden, notFound } from '../errors.ts';
import { recordEvent } from '../tickets/events.ts';
import { storedHtml } from '../tickets/markdown.ts';
import { loadTicket } from '../tickets/load.ts';
import { readableAudiences } from '../access/permissions.ts';
import { ticketRef } from '../tickets/schemas.ts';
import { idField, withReasons } from '../validation.ts';
import { defineOp } from '../operation.ts';
import { okSchema } from '../response-schema.ts';
import { commentSchema } from '../tickets/page-schema.ts';
import { applyMentions, commentAudience, commentBody, commentMentions, mentionIds, mentionNames, type MentionOptions } from './create.ts';
import { findComment, presentComment, type Comment, type CommentRow } from './present.ts';

const byComment = { ref: ticketRef, commentId: idField('Comment id.') };
const PATH_REASONS = { commentId: 'bad_uuid' };

/** PATCH /tickets/{ref}/comments/{id}'s body. */
export const editCommentFields = z.object({
  body: commentBody.optional().describe('New Markdown text, 1–50,000 characters'),
  audience: commentAudience.optional().describe('New audience; attachments of the comment follow it'),
  mentions: commentMentions.optional(),
});
const editObject = editCommentFields.extend(byComment);
const changesSomething = (v: { body?: string | undefined; audience?: string | undefined }) => v.body !== undefined || v.audience !== undefined;
const NOTHING_SENT = { message: 'Send body or audience.', path: ['body'] };
export const editCommentInput = withReasons(editObject.refine(changesSomething, NOTHING_SENT), PATH_REASONS);
const editCommentByNameInput = withReasons(editObject.extend({ mentions: mentionNames.optional() }).refine(changesSomething, NOTHING_SENT), PATH_REASONS);
export const deleteCommentInput = withReasons(z.object(byComment), PATH_REASONS);

/** The comment, when it is on this ticket and the caller may read its audience; else 404. */
async function readableComment(ctx: Ctx, p: Principal, ticketId: string, commentId: string): Promise<CommentRow> {
  const c = await findComment(ctx.sql, ticketId, commentId, { lock: true });
  if (!c || !readableAudiences(p).includes(c.audience)) throw notFound('unknown_comment', { field: 'commentId' }, 'No such comment on this ticket.');
  return c;
}

/**
 * PATCH /tickets/{ref}/comments/{id}: the author only, with the posting rules: the old and the
 * new audience must both be writable by the caller (the action's rule), and mentions apply as on
 * a new comment. An edit that changes nothing writes nothing.
 */
async function changeComment(ctx: Ctx, data: z.output<typeof editCommentByNameInput>, opts: MentionOptions): Promise<Comment> {
  const { sql, principal: p } = ctx;
  const t = await loadTicket(ctx, data.ref, { lock: true });
  const c = await readableComment(ctx, p, t.id, data.commentId);
  if (c.authorId !== p.identityId) throw forbidden('not_author', undefined, 'Only the author may edit a comment.');
  authorize(ctx, 'comments.edit', t, { audience: c.audience });
  const audience = data.audience ?? c.audience;
  if (audience !== c.audience) authorize(ctx, 'comments.edit', t, { audience });
  await applyMentions(ctx, t, audience, await mentionIds(ctx, data.mentions, opts));
  const body = data.body ?? c.body;
  if (body === c.body && audience === c.audience) return presentComment(c);
  const now = ctx.now();
  const html = storedHtml(body);
  await sql`update comments set body = ${body}, body_html = ${html.html}, body_html_version = ${html.version}, audience = ${audience}, updated_at = greatest(${now}, created_at + interval '1 millisecond') where id = ${c.id}`;
  if (audience !== c.audience) await sql`update attachments set audience = ${audience} where comment_id = ${c.id}`;
  await recordEvent(
    sql,
    { workspaceId: p.workspaceId, ticketId: t.id, kind: 'comment_edited', actorId: p.identityId, payload: { commentId: c.id, audience } },
    now,
  );
  return presentComment((await findComment(sql, t.id, c.id))!);
}

/** PATCH /tickets/{ref}/comments/{id}: mentions are identity ids. */
export const editComment = defineOp({
  name: 'comments.edit',
  action: 'comments.edit',
  input: editCommentInput,
  output: commentSchema,
  tx: true,
  run: (ctx, data) => changeComment(ctx, data, {}),
});

/** The MCP tool's edit: mentions as a person types them, resolved after the other checks (MentionOptions). */
export const editCommentByName = defineOp({
  name: 'comments.edit.byName',
  action: 'comments.edit',
  input: editCommentByNameInput,
  output: commentSchema,
  tx: true,
  run: (ctx, data) => changeComment(ctx, data, { mentionsBy: 'name' }),
});

/**
 * DELETE /tickets/{ref}/comments/{id}: the author, or an Owner or Admin (moderation). The
 * comment's attachments go with it.
 */
export const deleteComment = defineOp({
  name: 'comments.delete',
  action: 'comments.delete',
  input: deleteCommentInput,
  output: okSchema,
  tx: true,
  run: async (ctx, { ref, commentId }): Promise<{ ok: true }> => {
    const { sql, principal: p } = ctx;
    const t = await loadTicket(ctx, ref, { lock: true });
    const c = await readableComment(ctx, p, t.id, commentId);
    if (c.authorId !== p.identityId && !isAdminRole(p.role))
      throw forbidden('not_author', undefined, 'Only the author or an owner or admin may delete a comment.');
    await sql`delete from comments where id = ${c.id}`;
    await recordEvent(
      sql,
      { workspaceId: p.workspaceId, ticketId: t.id, kind: 'comment_deleted', actorId: p.identityId, payload: { commentId: c.id, audience: c.audience } },
      ctx.now(),
    );
    return { ok: true };
  },
});
