import { z } from 'zod';
import { deleteComment, editCommentByName } from '../../core/comments/change.ts';
import { commentBody, createCommentByName, mentionNames } from '../../core/comments/create.ts';
import { COMMENT_PAGE_MAX, listComments } from '../../core/comments/list.ts';
import type { Comment } from '../../core/comments/present.ts';
import { cursorArg, DEFAULT_PAGE, defined, limitArg, ticketArg } from '../args.ts';
import { lines, ok } from '../shapes.ts';
import { defineTool } from '../tool.ts';

const FIELDS = { ref: 'ticket', commentId: 'comment' };

const comment = z.object({
  id: z.string(),
  author: z.string().nullable(),
  audience: z.string(),
  body: z.string(),
  source: z.string(),
  createdAt: z.string(),
  edited: z.boolean(),
});

/** A comment in a line or two: who, audience, when, the body cut short. */
const commentText = (c: z.output<typeof comment>) =>
  `${c.author ?? 'Someone'} (${c.audience}, ${c.createdAt}${c.edited ? ', edited' : ''}) [${c.id}]: ${c.body.length > 200 ? `${c.body.slice(0, 199)}…` : c.body}`;

const commentOf = (c: Comment): z.input<typeof comment> => ({
  id: c.id,
  author: c.author?.name ?? null,
  audience: c.audience,
  body: c.body,
  source: c.source,
  createdAt: c.createdAt,
  edited: c.edited,
});

const audienceArg = z.enum(['internal', 'client']).describe('internal: staff only; client: also client people.');
const mentionsArg = mentionNames.describe('People to mention; client people mentioned in a client comment become viewers.');

export const addCommentTool = defineTool({
  name: 'add_comment',
  title: 'Add comment',
  description: 'Comment on a ticket in Markdown. Default audience: internal for workspace users, client for client users. Returns the comment.',
  toolset: 'tickets',
  // mentions are names: the core resolves them after its own checks (the ticket, the comment, the audience)
  op: createCommentByName,
  input: () =>
    z.object({
      ticket: ticketArg(),
      body: commentBody.describe('Markdown.'),
      audience: audienceArg.optional(),
      mentions: mentionsArg.optional(),
    }),
  output: comment,
  fields: FIELDS,
  text: (c) => `Added: ${commentText(c)}`,
  args: (_ctx, a) => defined({ ref: a.ticket, body: a.body, audience: a.audience, mentions: a.mentions }),
  result: commentOf,
});

export const listCommentsTool = defineTool({
  name: 'list_comments',
  title: 'List comments',
  description: 'The comments of a ticket you may read, oldest first, in full; page with nextCursor.',
  toolset: 'tickets',
  op: listComments,
  idempotent: true,
  input: () => z.object({ ticket: ticketArg(), cursor: cursorArg, limit: limitArg('Page size', DEFAULT_PAGE, COMMENT_PAGE_MAX) }),
  output: z.object({ items: z.array(comment), nextCursor: z.string().nullable() }),
  fields: FIELDS,
  args: (_ctx, a) => defined({ ref: a.ticket, cursor: a.cursor, limit: a.limit }),
  result: (page) => ({ items: page.items.map(commentOf), nextCursor: page.nextCursor }),
  text: (p) => [lines(p.items, commentText, 'No comments.'), ...(p.nextCursor ? [`More: cursor=${p.nextCursor}`] : [])].join('\n'),
});

export const editCommentTool = defineTool({
  name: 'edit_comment',
  title: 'Edit comment',
  description: 'Change the body or audience of your own comment.',
  toolset: 'tickets',
  op: editCommentByName,
  idempotent: true,
  input: () =>
    z.object({
      ticket: ticketArg(),
      comment: z.string().describe('Comment id.'),
      body: commentBody.optional().describe('New Markdown.'),
      audience: audienceArg.optional(),
      mentions: mentionsArg.optional(),
    }),
  output: comment,
  fields: FIELDS,
  text: (c) => `Edited: ${commentText(c)}`,
  args: (_ctx, a) => defined({ ref: a.ticket, commentId: a.comment, body: a.body, audience: a.audience, mentions: a.mentions }),
  result: commentOf,
});

export const deleteCommentTool = defineTool({
  name: 'delete_comment',
  title: 'Delete comment',
  description: 'Delete a comment: your own, or any as owner/admin. Its attachments go with it.',
  toolset: 'tickets',
  op: deleteComment,
  destructive: true,
  idempotent: true,
  input: () => z.object({ ticket: ticketArg(), comment: z.string().describe('Comment id.') }),
  output: ok,
  fields: FIELDS,
  args: (_ctx, a) => ({ ref: a.ticket, commentId: a.comment }),
});
