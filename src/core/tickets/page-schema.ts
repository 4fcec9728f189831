import { z } from 'zod';
import type { Attachment } from '../attachments/present.ts';
import type { CodehostLink } from '../codehost/present.ts';
import type { Comment } from '../comments/present.ts';
import { dateTimeOut, describing, uuidOut } from '../response-schema.ts';
import type { TicketTime } from '../time/ticket-time.ts';
import type { TicketPage } from './get.ts';
import type { TicketPermissions } from '../access/permissions.ts';
import { personRefSchema, ticketSummarySchema } from './summary-schema.ts';

/** Response schemas of the contract's TicketPage and the parts other responses share (comments, attachments, code-host links). */

const audience = z.enum(['internal', 'client']);
const source = z.enum(['ui', 'email', 'api', 'mcp', 'codehost']);
const actor = z.object({ id: uuidOut, name: z.string() });
const refState = z.object({ id: uuidOut, key: z.string(), name: z.string(), category: z.enum(['open', 'closed']) });
const ticketRef = z.object({ id: uuidOut, humanId: z.string(), title: z.string(), state: refState });
const linked = ticketRef.extend({ linkId: uuidOut });

export const commentSchema = describing<Comment>()(
  z
    .object({
      id: uuidOut,
      body: z.string().describe('Markdown.'),
      bodyHtml: z.string().describe('The body rendered and sanitized.'),
      audience,
      author: personRefSchema.nullable(),
      source,
      createdAt: dateTimeOut,
      updatedAt: dateTimeOut,
      edited: z.boolean().describe('True once the body or audience changed after posting.'),
    })
    .meta({ id: 'Comment' }),
);

export const attachmentSchema = describing<Attachment>()(
  z
    .object({
      id: uuidOut,
      filename: z.string(),
      contentType: z.string(),
      size: z.number().int(),
      inline: z.boolean(),
      audience,
      commentId: uuidOut.nullable(),
      uploadedBy: actor.nullable(),
      createdAt: dateTimeOut,
    })
    .meta({ id: 'Attachment' }),
);

export const codehostLinkSchema = describing<CodehostLink>()(
  z
    .object({
      id: uuidOut,
      repo: z.string().describe('owner/name'),
      sha: z.string().nullable(),
      pr: z.number().int().nullable(),
      url: z.string(),
      createdAt: dateTimeOut,
    })
    .meta({ id: 'CodehostLink' }),
);

const ticketTimeSchema = describing<TicketTime>()(
  z.object({
    loggedMinutes: z.number().int().optional().describe('Absent for client users.'),
    billableMinutes: z.number().int(),
    unbilledMinutes: z.number().int(),
  }),
);

const permissionsSchema = describing<TicketPermissions>()(
  z
    .object({
      edit: z.boolean(),
      read: z.array(audience),
      comment: z.array(audience),
      defaultAudience: audience,
      changeAssignee: z.boolean(),
      moveState: z.array(uuidOut).describe('States the caller may move the ticket to.'),
      customerResolveStateId: uuidOut.nullable(),
      setBilling: z.boolean(),
      changeKind: z.boolean(),
      addViewers: z.boolean(),
      move: z.boolean(),
      archive: z.boolean(),
      logTime: z.boolean(),
      seeInternalFigures: z.boolean(),
    })
    .meta({ id: 'TicketPermissions' }),
);

const billingMode = z.enum(['period', 'on_close']);

export const ticketPageSchema = describing<TicketPage>()(
  ticketSummarySchema
    .extend({
      description: z.string().describe('Markdown.'),
      descriptionHtml: z.string(),
      source,
      startedBy: z.enum(['workspace', 'client', 'email']),
      archived: z.boolean(),
      closedAt: dateTimeOut.nullable(),
      viewers: z.array(
        z.object({
          identityId: uuidOut,
          name: z.string(),
          email: z.string().nullable(),
          kind: z.enum(['workspace', 'agent', 'client']),
          clientName: z.string().nullable(),
          addedBy: actor.nullable(),
          isReporter: z.boolean(),
          canRemove: z.boolean(),
        }),
      ),
      billing: z
        .object({
          billingClient: z.object({ id: uuidOut, name: z.string() }).nullable(),
          billingPolicy: z.string().nullable().describe("The ticket's own policy; null inherits."),
          effectiveBillingPolicy: z.string(),
          billingMode: billingMode.nullable(),
          effectiveBillingMode: billingMode,
          billingDescription: z.string().nullable(),
          estimateMinutes: z.number().int().nullable(),
          rollupEstimateMinutes: z.number().int().nullable(),
        })
        .optional()
        .describe('Absent for client users.'),
      comments: z.array(commentSchema),
      events: z.array(
        z.object({
          id: uuidOut,
          kind: z.string(),
          actor: actor.nullable(),
          subject: z.string().nullable(),
          payload: z.record(z.string(), z.unknown()),
          createdAt: dateTimeOut,
        }),
      ),
      attachments: z.array(attachmentSchema),
      links: z.object({
        parent: ticketRef.nullable(),
        children: z.array(ticketRef),
        blocks: z.array(linked),
        blockedBy: z.array(linked),
        relates: z.array(linked),
        duplicates: z.array(linked.extend({ direction: z.enum(['outgoing', 'incoming']) })),
      }),
      time: ticketTimeSchema.nullable().describe('Null for client users who cannot read time.'),
      codehost: z.array(codehostLinkSchema),
      permissions: permissionsSchema,
      commentsOmitted: z.number().int().optional().describe('Only on windowed pages (assistants): readable comments left out.'),
    })
    .meta({ id: 'TicketPage' }),
);
