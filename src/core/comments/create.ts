import { z } from 'zod';
import { authorize } from '../access/authorize.ts';
import type { Ctx } from '../ctx.ts';
import { forbidden } from '../errors.ts';
import { resolvePersonIds } from '../resolve/people.ts';
import { recordEvent } from '../tickets/events.ts';
import { storedHtml } from '../tickets/markdown.ts';
import { loadTicket } from '../tickets/load.ts';
import { defaultAudience, type Audience } from '../access/permissions.ts';
import { ticketRef } from '../tickets/schemas.ts';
import { commentSchema } from '../tickets/page-schema.ts';
import { defineOp } from '../operation.ts';
import { classifyMentions } from '../viewers/audience.ts';
import { grantViewers } from '../viewers/grant.ts';
import { findComment, presentComment, type Comment } from './present.ts';

export const MAX_COMMENT_LENGTH = 50_000;

export const commentBody = z
  .string()
  .max(MAX_COMMENT_LENGTH)
  .refine((s) => s.trim().length > 0, 'A comment needs some text.')
  .describe('Markdown text, 1–50,000 characters');
export const commentAudience = z
  .enum(['internal', 'client'])
  .describe('"internal": workspace users only; "client": also the client people who can see the ticket. Client users may only write "client"');
/** People one comment may mention. */
export const MAX_MENTIONS = 20;
export const commentMentions = z
  .array(z.uuid())
  .max(MAX_MENTIONS)
  .describe(
    'Up to 20 identity ids to mention. In a "client" comment, a mentioned client person of the ticket\'s client becomes a viewer; mentioning a client person in an "internal" comment, or one of another client, is refused (preview with POST /visibility)',
  );

/** Mentions as a person types them (MCP): email, name, id or "me", resolved by the core (see MentionOptions). */
export const mentionNames = z.array(z.string()).max(MAX_MENTIONS);

/**
 * How the caller names the people a comment mentions. REST sends identity ids, which the input
 * schema checks (`createComment`, `editComment`). MCP sends what a person types (the `…ByName`
 * operations: the same rule, another input schema); the operation resolves them (resolvePersonIds) only
 * when it applies the mentions, after the ticket, the comment and the audience are checked, so a
 * call with a bad comment id and a bad name is refused for the id, as REST's would be.
 */
export interface MentionOptions {
  mentionsBy?: 'id' | 'name';
}

/** POST /tickets/{ref}/comments's body. */
export const createCommentFields = z.object({
  body: commentBody,
  audience: commentAudience.optional().describe('Default: "internal" for workspace users, "client" for client users'),
  mentions: commentMentions.optional(),
});
export const createCommentInput = createCommentFields.extend({ ref: ticketRef });
const createCommentByNameInput = createCommentInput.extend({ mentions: mentionNames.optional() });

/** The identity ids of the mentions, named as `opts` says (see MentionOptions). */
export async function mentionIds(ctx: Ctx, mentions: readonly string[] | undefined, opts: MentionOptions): Promise<readonly string[]> {
  if (!mentions) return [];
  return opts.mentionsBy === 'name' ? resolvePersonIds(ctx, mentions, 'mentions') : mentions;
}

/**
 * Applies mentions for a comment of `audience`: any denied mention refuses the whole write with
 * 403 `share_forbidden` (the first one's `identityId` and `name`), since the preview endpoint
 * tells the client beforehand; mentions that gain access become viewers. Returns nothing the
 * caller needs: the grants write their own `viewer_added` events.
 */
export async function applyMentions(ctx: Ctx, ticket: { id: string; workspaceId: string }, audience: Audience, mentions: readonly string[]): Promise<void> {
  const outcome = await classifyMentions(ctx.sql, ticket, audience, mentions);
  const denied = outcome.denied[0];
  if (denied) {
    throw forbidden('share_forbidden', { identityId: denied.identityId, name: denied.name }, `${denied.name} may not be mentioned in this comment.`);
  }
  await grantViewers(
    ctx,
    ticket,
    outcome.willGainAccess.map((person) => person.identityId),
  );
}

/**
 * POST /tickets/{ref}/comments. Anyone who sees the ticket and holds a write credential may
 * comment, at an audience in `permissions.comment` (the action's rule). `source` follows the
 * credential (api for a token, ui for a session); the author is the acting person (a delegated
 * token's creator).
 */
async function postComment(ctx: Ctx, data: z.output<typeof createCommentByNameInput>, opts: MentionOptions): Promise<Comment> {
  const { sql, principal: p } = ctx;
  const t = await loadTicket(ctx, data.ref, { lock: true });
  const audience = data.audience ?? defaultAudience(p);
  authorize(ctx, 'comments.create', t, { audience });
  await applyMentions(ctx, t, audience, await mentionIds(ctx, data.mentions, opts));
  const now = ctx.now();
  const html = storedHtml(data.body);
  const [row] = await sql<{ id: string }[]>`
    insert into comments (workspace_id, ticket_id, author_id, audience, body, body_html, body_html_version, source, created_at, updated_at)
    values (${p.workspaceId}, ${t.id}, ${p.identityId}, ${audience}, ${data.body}, ${html.html}, ${html.version}, ${p.source}, ${now}, ${now})
    returning id`;
  await recordEvent(
    sql,
    { workspaceId: p.workspaceId, ticketId: t.id, kind: 'comment_added', actorId: p.identityId, payload: { commentId: row!.id, audience } },
    now,
  );
  return presentComment((await findComment(sql, t.id, row!.id))!);
}

/** POST /tickets/{ref}/comments: mentions are identity ids. */
export const createComment = defineOp({
  name: 'comments.create',
  action: 'comments.create',
  input: createCommentInput,
  output: commentSchema,
  tx: true,
  run: (ctx, data) => postComment(ctx, data, {}),
});

/** The MCP tool's comment: mentions as a person types them, resolved after the other checks (MentionOptions). */
export const createCommentByName = defineOp({
  name: 'comments.create.byName',
  action: 'comments.create',
  input: createCommentByNameInput,
  output: commentSchema,
  tx: true,
  run: (ctx, data) => postComment(ctx, data, { mentionsBy: 'name' }),
});
