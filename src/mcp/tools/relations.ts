import { z } from 'zod';
import { addCodehostLink } from '../../core/codehost/add.ts';
import { removeCodehostLink } from '../../core/codehost/remove.ts';
import { addLink } from '../../core/links/add.ts';
import { removeLink } from '../../core/links/remove.ts';
import { resolveLinkToRemove, resolveTicketUuid } from '../../core/resolve/tickets.ts';
import { setParent } from '../../core/tickets/parent.ts';
import { defined, ticketArg } from '../args.ts';
import { ok } from '../shapes.ts';
import { defineTool } from '../tool.ts';

const kindArg = z.enum(['blocks', 'relates', 'duplicates']).describe('blocks: ticket blocks target; duplicates: ticket duplicates target.');

export const linkTicketsTool = defineTool({
  name: 'link_tickets',
  title: 'Link tickets',
  description: 'Link two tickets (blocks, relates, duplicates). id is null when the link already existed.',
  toolset: 'tickets',
  op: addLink,
  idempotent: true,
  input: () => z.object({ ticket: ticketArg(), target: ticketArg('The other ticket'), kind: kindArg }),
  output: z.object({ id: z.string().nullable() }),
  fields: { ref: 'ticket', targetId: 'target' },
  args: async (ctx, a) => ({ ref: a.ticket, targetId: await resolveTicketUuid(ctx, a.target, 'target'), kind: a.kind }),
});

export const unlinkTicketsTool = defineTool({
  name: 'unlink_tickets',
  title: 'Unlink tickets',
  description: 'Remove a link: give linkId (from get_ticket links), or the other ticket as target (plus kind when they share several links).',
  toolset: 'tickets',
  op: removeLink,
  destructive: true,
  idempotent: true,
  input: () =>
    z.object({
      ticket: ticketArg(),
      linkId: z.string().optional().describe('Link id.'),
      target: ticketArg('The other ticket').optional(),
      kind: kindArg.optional().describe('Link kind.'),
    }),
  output: ok,
  fields: { ref: 'ticket' },
  args: async (ctx, a) => ({
    ref: a.ticket,
    linkId: await resolveLinkToRemove(ctx, a.ticket, defined({ linkId: a.linkId, target: a.target, kind: a.kind })),
  }),
});

export const setParentTool = defineTool({
  name: 'set_parent',
  title: 'Set parent',
  description: "Nest a ticket under a parent ticket (it becomes a sub-ticket), or null to make it top-level. A parent's estimate is the sum of its children.",
  toolset: 'tickets',
  op: setParent,
  idempotent: true,
  input: () => z.object({ ticket: ticketArg(), parent: ticketArg('Parent ticket').nullable() }),
  output: ok,
  fields: { ref: 'ticket', parentId: 'parent' },
  args: async (ctx, a) => ({ ref: a.ticket, parentId: a.parent === null ? null : await resolveTicketUuid(ctx, a.parent, 'parent') }),
});

const codehostLink = z.object({
  id: z.string(),
  repo: z.string(),
  sha: z.string().nullable(),
  pr: z.number().nullable(),
  url: z.string(),
  createdAt: z.string(),
});

export const addCodehostLinkTool = defineTool({
  name: 'add_codehost_link',
  title: 'Add code-host link',
  description: 'Attach a GitHub commit (sha) or pull request (pr) to a ticket; give exactly one. Stored once per ticket.',
  toolset: 'tickets',
  op: addCodehostLink,
  idempotent: true,
  input: () =>
    z.object({
      ticket: ticketArg(),
      repo: z.string().describe('"owner/name".'),
      url: z.string().describe('https://github.com/owner/name/... link.'),
      sha: z.string().optional().describe('Commit hash (hex); the core checks its form.'),
      pr: z.number().optional().describe('Pull request number.'),
    }),
  output: codehostLink,
  fields: { ref: 'ticket' },
  args: (_ctx, a) => defined({ ref: a.ticket, repo: a.repo, url: a.url, sha: a.sha, pr: a.pr }),
});

export const removeCodehostLinkTool = defineTool({
  name: 'remove_codehost_link',
  title: 'Remove code-host link',
  description: 'Remove a code-host reference from a ticket by its id (from get_ticket codehost).',
  toolset: 'tickets',
  op: removeCodehostLink,
  destructive: true,
  idempotent: true,
  input: () => z.object({ ticket: ticketArg(), linkId: z.string().describe('Code-host link id.') }),
  output: ok,
  fields: { ref: 'ticket' },
  args: (_ctx, a) => ({ ref: a.ticket, linkId: a.linkId }),
});
