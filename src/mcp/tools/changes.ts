import { z } from 'zod';
import { changesQuery, listChanges } from '../../core/changes/feed.ts';
import { lines } from '../shapes.ts';
import { defineTool } from '../tool.ts';

export const listChangesTool = defineTool({
  name: 'list_changes',
  title: 'List changes',
  description:
    'Ticket changes in commit order (kind: timeline event kind, "deleted" when a ticket you could see was deleted, or "gone" when a ticket left your sight). Start with after=0, then pass nextAfter; pollAfterSeconds 0 means more to read now.',
  toolset: 'tickets',
  op: listChanges,
  idempotent: true,
  input: () => changesQuery,
  output: z.object({
    changes: z.array(z.object({ seq: z.number().int(), ticketId: z.uuid(), humanId: z.string(), kind: z.string(), at: z.string() })),
    nextAfter: z.number().int(),
    pollAfterSeconds: z.number().int(),
  }),
  args: (_ctx, a) => a,
  text: (c) =>
    [lines(c.changes, (x) => `${x.seq} ${x.humanId} ${x.kind} ${x.at}`, 'No changes.'), `nextAfter=${c.nextAfter} pollAfterSeconds=${c.pollAfterSeconds}`].join(
      '\n',
    ),
});
