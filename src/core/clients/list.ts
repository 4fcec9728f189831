import { z } from 'zod';
import { defineOp } from '../operation.ts';
import { clientColumns } from './read.ts';
import { clientListSchema, type Client } from './schema.ts';

export const listClientsInput = z.object({
  archived: z.enum(['true', 'false', 'all']).default('false').describe('false (default): active clients; true: archived ones only; all: both.'),
});

/**
 * GET /clients (workspace users, token read): the workspace's clients by name. Every workspace
 * user already chooses among them (a ticket's billing client, the client filters); client users
 * never learn the agency's other clients.
 */
export const listClients = defineOp({
  name: 'clients.list',
  action: 'clients.list',
  input: listClientsInput,
  output: clientListSchema,
  run: async (ctx, input): Promise<{ clients: Client[] }> => {
    const { sql, principal: p } = ctx;
    const archived = input.archived === 'all' ? sql`` : input.archived === 'true' ? sql`and c.archived_at is not null` : sql`and c.archived_at is null`;
    const rows = await sql<Client[]>`
      select ${clientColumns(sql)} from clients c where c.workspace_id = ${p.workspaceId} ${archived}
      order by lower(c.name), c.code`;
    return { clients: [...rows] };
  },
});
