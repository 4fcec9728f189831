import { z } from 'zod';
import { defineOp } from '../operation.ts';
import { idField, withReasons } from '../validation.ts';
import { loadClient } from './read.ts';
import { clientDetailSchema, type ClientDetail, type ClientUser } from './schema.ts';

export const clientIdInput = withReasons(z.object({ id: idField('The client.') }), { id: 'bad_uuid' });

/** GET /clients/{id} (Owner/Admin): the client with its users (client-role memberships), by name. */
export const getClient = defineOp({
  name: 'clients.read',
  action: 'clients.read',
  input: clientIdInput,
  output: clientDetailSchema,
  run: async (ctx, { id }): Promise<ClientDetail> => {
    const client = await loadClient(ctx, id);
    const users = await ctx.sql<ClientUser[]>`
      select i.id, person_name(m.workspace_id, i.id, i.name) as name, i.email, m.role
      from memberships m join identities i on i.id = m.identity_id
      where m.workspace_id = ${ctx.principal.workspaceId} and m.client_id = ${id}
      order by lower(i.name), i.id`;
    return { ...client, users: [...users] };
  },
});
