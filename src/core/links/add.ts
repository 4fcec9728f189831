import { z } from 'zod';
import type { Db } from '../../db/connect.ts';
import { authorize } from '../access/authorize.ts';
import { defineOp } from '../operation.ts';
import { conflict, invalid, notFound } from '../errors.ts';
import { holdTickets } from '../tickets/concurrency.ts';
import { recordEvents } from '../tickets/events.ts';
import { isVisible, loadTicket } from '../tickets/load.ts';
import { ticketRef } from '../tickets/schemas.ts';
import { lockTicketGraph } from './graph-lock.ts';
import { addedLinkSchema } from './schema.ts';

export const linkKinds = ['blocks', 'relates', 'duplicates'] as const;
export type LinkKind = (typeof linkKinds)[number];

/** A blocking chain (first blocker to last blocked ticket) has at most this many edges. */
export const MAX_BLOCKING_CHAIN = 10;

/** POST /tickets/{ref}/links's body. */
export const addLinkFields = z.object({
  targetId: z.uuid().describe('UUID of the other ticket; it must be visible to you'),
  kind: z
    .enum(linkKinds)
    .describe(
      '"blocks": this ticket blocks the target (the target lists it under blockedBy); "relates": the two are related; "duplicates": this ticket duplicates the target',
    ),
});
export const addLinkInput = addLinkFields.extend({ ref: ticketRef });

/**
 * POST /tickets/{ref}/links. Needs edit rights on the ticket; the target only needs to be
 * visible. An existing link is not duplicated (201 with `id: null`): `relates` and
 * `duplicates` are symmetric, so B→A counts as A→B; `blocks` is directed, and its reverse is a
 * cycle. Link writes of a workspace are serialised so that cycle and depth checks hold.
 */
export const addLink = defineOp({
  name: 'links.add',
  action: 'links.add',
  input: addLinkInput,
  output: addedLinkSchema,
  tx: true,
  run: async (ctx, { ref, targetId, kind }): Promise<{ id: string | null }> => {
    const { sql, principal: p } = ctx;
    await lockTicketGraph(sql, p.workspaceId, 'links');
    const t = await loadTicket(ctx, ref);
    authorize(ctx, 'links.add', t);
    const target = targetId.toLowerCase();
    if (target === t.id) throw invalid('self_link', { field: 'targetId' }, 'A ticket cannot be linked to itself.');
    if (!(await isVisible(ctx, target))) throw notFound(undefined, { field: 'targetId' }, 'No such target ticket.');
    await holdTickets(sql, [t.id, target]);

    const symmetric = kind !== 'blocks';
    const [existing] = await sql`
      select 1 from ticket_links l
      where l.kind = ${kind} and ((l.source_id = ${t.id} and l.target_id = ${target})
            ${symmetric ? sql`or (l.source_id = ${target} and l.target_id = ${t.id})` : sql``})`;
    if (existing) return { id: null };
    if (kind === 'blocks') await checkBlockingChain(sql, t.id, target);

    const [link] = await sql<{ id: string }[]>`
      insert into ticket_links (workspace_id, source_id, target_id, kind, created_by, created_at)
      values (${p.workspaceId}, ${t.id}, ${target}, ${kind}, ${p.identityId}, ${ctx.now()})
      returning id`;
    const id = link!.id;
    await recordEvents(
      sql,
      [
        {
          workspaceId: p.workspaceId,
          ticketId: t.id,
          kind: 'link_added',
          actorId: p.identityId,
          payload: { linkId: id, kind, direction: 'outgoing', otherId: target },
        },
        {
          workspaceId: p.workspaceId,
          ticketId: target,
          kind: 'link_added',
          actorId: p.identityId,
          payload: { linkId: id, kind, direction: 'incoming', otherId: t.id },
        },
      ],
      ctx.now(),
    );
    return { id };
  },
});

/**
 * Would "source blocks target" keep the blocking graph acyclic and its chains at most ten
 * edges? Reads every blocking link of the workspace's tickets, visible or not; call it with the
 * `links` graph lock held. `union` (not `union all`) keeps each (ticket, depth) once, so the
 * walk stays polynomial however the chains fan out; the depth cap guards against damaged data.
 */
export async function checkBlockingChain(sql: Db, source: string, target: string): Promise<void> {
  const [down] = await sql<{ cycle: boolean; below: number }[]>`
    with recursive down (id, depth) as (
      select ${target}::uuid, 0
      union
      select l.target_id, d.depth + 1 from down d join ticket_links l on l.source_id = d.id and l.kind = 'blocks' where d.depth < 32
    )
    select coalesce(bool_or(id = ${source}::uuid), false) as cycle, max(depth)::integer as below from down`;
  if (down!.cycle) throw conflict('dependency_cycle', { field: 'targetId' }, 'The target already blocks this ticket, directly or through others.');
  const [up] = await sql<{ above: number }[]>`
    with recursive up (id, depth) as (
      select ${source}::uuid, 0
      union
      select l.source_id, u.depth + 1 from up u join ticket_links l on l.target_id = u.id and l.kind = 'blocks' where u.depth < 32
    )
    select max(depth)::integer as above from up`;
  const depth = up!.above + 1 + down!.below;
  if (depth > MAX_BLOCKING_CHAIN) {
    throw conflict(
      'dependency_depth',
      { depth, max: MAX_BLOCKING_CHAIN },
      `A blocking chain is at most ${MAX_BLOCKING_CHAIN} edges; this one would have ${depth}.`,
    );
  }
}
