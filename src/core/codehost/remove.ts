import { z } from 'zod';
import { authorize } from '../access/authorize.ts';
import { idField, withReasons } from '../validation.ts';
import { defineOp } from '../operation.ts';
import { okSchema } from '../response-schema.ts';
import { notFound } from '../errors.ts';
import { recordEvent } from '../tickets/events.ts';
import { loadTicket } from '../tickets/load.ts';
import { ticketRef } from '../tickets/schemas.ts';

export const removeCodehostInput = withReasons(z.object({ ref: ticketRef, linkId: idField('Code-host link id.') }), { linkId: 'bad_uuid' });

/** DELETE /tickets/{ref}/codehost/{linkId}: needs edit rights; the reference must belong to this ticket. */
export const removeCodehostLink = defineOp({
  name: 'codehost.remove',
  action: 'codehost.remove',
  input: removeCodehostInput,
  output: okSchema,
  tx: true,
  run: async (ctx, { ref, linkId }): Promise<{ ok: true }> => {
    const { sql, principal: p } = ctx;
    const t = await loadTicket(ctx, ref);
    authorize(ctx, 'codehost.remove', t);
    const [gone] = await sql<{ id: string; repo: string; sha: string | null; pr: number | null }[]>`
      delete from codehost_links where id = ${linkId} and ticket_id = ${t.id} returning id, repo, sha, pr`;
    if (!gone) throw notFound('unknown_link', { field: 'linkId' }, 'No such code-host reference on this ticket.');
    await recordEvent(
      sql,
      {
        workspaceId: p.workspaceId,
        ticketId: t.id,
        kind: 'codehost_removed',
        actorId: p.identityId,
        payload: { linkId: gone.id, repo: gone.repo, sha: gone.sha, pr: gone.pr },
      },
      ctx.now(),
    );
    return { ok: true };
  },
});
