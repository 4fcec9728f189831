import { z } from 'zod';
import { defineOp } from '../operation.ts';
import { idField, withReasons } from '../validation.ts';
import { loadClient } from './read.ts';
import { clientSchema, type Client } from './schema.ts';

export const archiveClientInput = withReasons(
  z.object({
    id: idField('The client.'),
    archived: z.boolean().default(true).describe('true (default) archives the client; false restores it.'),
  }),
  { id: 'bad_uuid' },
);

/**
 * POST /clients/{id}/archive (Owner/Admin): archives (or, with `archived: false`, restores) a client.
 * An archived client keeps its projects, tickets, time, banks, documents and users; it leaves the
 * client lists and cannot become a project's billing or collaborating client. Archiving an archived
 * client changes nothing (its first date stays).
 */
export const archiveClient = defineOp({
  name: 'clients.archive',
  action: 'clients.archive',
  input: archiveClientInput,
  output: clientSchema,
  tx: true,
  audit: {
    action: 'clients.archive',
    target: (s) => (typeof s.id === 'string' ? s.id : null),
    detail: (i) => (i.archived ? 'archived' : 'restored'),
  },
  run: async (ctx, input): Promise<Client> => {
    await loadClient(ctx, input.id, { lock: true });
    await ctx.sql`
      update clients set archived_at = ${input.archived ? ctx.sql`coalesce(archived_at, ${ctx.now()})` : null}
      where id = ${input.id}`;
    return loadClient(ctx, input.id);
  },
});
