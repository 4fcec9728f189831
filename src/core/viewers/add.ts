import { z } from 'zod';
import { authorize } from '../access/authorize.ts';
import { forbidden } from '../errors.ts';
import { loadTicket } from '../tickets/load.ts';
import { ticketRef } from '../tickets/schemas.ts';
import { defineOp } from '../operation.ts';
import { peopleOnTicket, uniqueIds } from './audience.ts';
import { grantViewers } from './grant.ts';
import { addedViewersSchema } from './schema.ts';

/** POST /tickets/{ref}/viewers's body. */
export const addViewersFields = z.object({
  identityIds: z.array(z.uuid()).min(1).max(20).describe('1–20 identity ids of workspace members to add as viewers (they can then see and follow the ticket)'),
});
export const addViewersInput = addViewersFields.extend({ ref: ticketRef });

/**
 * POST /tickets/{ref}/viewers. Needs `permissions.addViewers`. All or nothing: an id that is not
 * a member of the workspace is 404 `unknown_person`, a client user of a client the ticket does
 * not belong to is 403 `share_forbidden` (see audience.ts `ticketClients`), and then nobody is
 * added. Answers the ids actually granted; people who already were viewers are left out.
 */
export const addViewers = defineOp({
  name: 'viewers.add',
  action: 'viewers.add',
  input: addViewersInput,
  output: addedViewersSchema,
  tx: true,
  run: async (ctx, { ref, identityIds }): Promise<{ added: string[] }> => {
    const { sql } = ctx;
    const t = await loadTicket(ctx, ref);
    authorize(ctx, 'viewers.add', t);
    const ids = uniqueIds(identityIds);
    const people = await peopleOnTicket(sql, t, ids);
    const refused = people.find((person) => !person.shareable);
    if (refused) {
      throw forbidden(
        'share_forbidden',
        { identityId: refused.identityId, name: refused.name },
        `${refused.name} belongs to a client this ticket is not shared with.`,
      );
    }
    return { added: await grantViewers(ctx, t, ids) };
  },
});
