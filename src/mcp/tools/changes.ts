import { z } from 'zod';
import { changesQuery, listChanges } from '../../core/changes/feed.ts';
import { defineTool } from '../tool.ts';

export const listChangesTool = defineTool({
  name: 'list_changes',
  title: 'List changes',
  description:
    'What changed since you last looked, in commit order: one entry per ticket change (kind is a timeline event kind, or "gone" when a ticket left your sight). Call with after=0 first, then pass the returned nextAfter; when pollAfterSeconds is 0 there is more to read now.',
  toolset: 'tickets',
  writes: false,
  idempotent: true,
  input: () => changesQuery,
  output: z.object({
    changes: z.array(z.object({ seq: z.number().int(), ticketId: z.uuid(), humanId: z.string(), kind: z.string(), at: z.string() })),
    nextAfter: z.number().int(),
    pollAfterSeconds: z.number().int(),
  }),
  run: (ctx, args) => listChanges(ctx, args),
});
