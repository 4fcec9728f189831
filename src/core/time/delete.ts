import { z } from 'zod';
import { idField, withReasons } from '../validation.ts';
import { isAdminRole } from '../auth/principal.ts';
import { defineOp } from '../operation.ts';
import { okSchema } from '../response-schema.ts';
import { conflict, forbidden } from '../errors.ts';
import { recordEvent } from '../tickets/events.ts';
import { chainNet, lockEntry, netNegative } from './common.ts';

const deleteTimeInput = withReasons(z.object({ id: idField('The time entry id.') }), { id: 'bad_uuid' });

/**
 * DELETE /time/{id} (browser session): removes an entry of an open period. Own entries;
 * Owner or Admin may delete anyone's. Billed entries and entries of closed periods stay
 * (a correction is made instead). An entry that has corrections stays too (`entry_corrected`),
 * and deleting a correction may not take its chain's net below zero.
 */
export const deleteTime = defineOp({
  name: 'time.delete',
  action: 'time.delete',
  input: deleteTimeInput,
  output: okSchema,
  tx: true,
  run: async (ctx, { id }): Promise<{ ok: true }> => {
    const { sql, principal: p } = ctx;
    const e = await lockEntry(ctx, id);
    if (e.userId !== p.identityId && !isAdminRole(p.role)) {
      throw forbidden('not_entry_author', undefined, 'Only the author, an owner or an admin may delete this entry.');
    }
    if (e.billed) throw conflict('entry_billed', undefined, 'A billed entry cannot be deleted.');
    if (e.periodClosed) throw conflict('closed_period_delete', undefined, 'The period is closed; create a correction instead.');
    if (e.hasCorrections) throw conflict('entry_corrected', undefined, 'This entry has corrections; correct it again instead.');
    if (e.correctsEntryId && (await chainNet(sql, e.correctsEntryId)) - e.minutes < 0) throw netNegative();
    await sql`delete from time_entries where id = ${e.id}`;
    await recordEvent(
      sql,
      {
        workspaceId: e.workspaceId,
        ticketId: e.ticketId,
        kind: 'time_deleted',
        actorId: p.identityId,
        payload: { entryId: e.id, minutes: e.minutes, spentOn: e.spentOn },
      },
      ctx.now(),
      { touch: 'at_commit' },
    );
    return { ok: true as const };
  },
});
