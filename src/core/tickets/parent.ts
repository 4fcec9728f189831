import { z } from 'zod';
import type { Db } from '../../db/connect.ts';
import { authorize } from '../access/authorize.ts';
import type { Principal } from '../auth/principal.ts';
import { defineOp } from '../operation.ts';
import { okSchema } from '../response-schema.ts';
import { conflict, invalid, notFound } from '../errors.ts';
import { lockTicketGraph } from '../links/graph-lock.ts';
import { holdTickets } from './concurrency.ts';
import { recordEvents, type NewEvent } from './events.ts';
import { isVisible, loadTicket } from './load.ts';
import { ticketRef } from './schemas.ts';

/** A parent chain (root to deepest leaf) has at most this many edges. */
export const MAX_PARENT_CHAIN = 10;

/** PUT /tickets/{ref}/parent's body. */
export const setParentFields = z.object({
  parentId: z.uuid().nullable().describe('UUID of the ticket to nest this ticket under (it becomes a sub-ticket of it); null makes the ticket top-level again'),
});
export const setParentInput = setParentFields.extend({ ref: ticketRef });

/**
 * PUT /tickets/{ref}/parent. Needs edit rights on the ticket; the parent only needs to be
 * visible. Refuses cycles and chains longer than ten edges (counting the ticket's own
 * descendants that move along with it). A parent's estimate is the sum of its children, so a
 * ticket that gains its first child loses its own estimate (recorded as a field change on it).
 */
export const setParent = defineOp({
  name: 'tickets.parent',
  action: 'tickets.parent',
  input: setParentInput,
  output: okSchema,
  tx: true,
  run: async (ctx, { ref, parentId }): Promise<{ ok: true }> => {
    const { sql, principal: p } = ctx;
    await lockTicketGraph(sql, p.workspaceId, 'parents');
    const t = await loadTicket(ctx, ref);
    authorize(ctx, 'tickets.parent', t);
    const next = parentId === null ? null : parentId.toLowerCase();
    if (next === t.id) throw invalid('self_parent', { field: 'parentId' }, 'A ticket cannot be its own parent.');
    if (next !== null && !(await isVisible(ctx, next))) throw notFound(undefined, { field: 'parentId' }, 'No such parent ticket.');
    // Both ends are held against a concurrent delete before the child's row is locked (see holdTickets);
    // the current parent is read under that lock, since deleting the old parent clears it.
    await holdTickets(sql, next === null ? [t.id] : [t.id, next]);
    const [current] = await sql<{ parentId: string | null }[]>`select parent_id as "parentId" from tickets where id = ${t.id} for no key update`;
    const old = current!.parentId;
    if (next === old) return { ok: true };
    if (next !== null) await checkParentChain(sql, t.id, next);

    await sql`update tickets set parent_id = ${next} where id = ${t.id}`;
    const events: NewEvent[] = [{ workspaceId: p.workspaceId, ticketId: t.id, kind: 'parent_changed', actorId: p.identityId, payload: { old, new: next } }];
    if (next !== null) events.push(...(await clearParentEstimate(sql, p, next)));
    await recordEvents(sql, events, ctx.now());
    return { ok: true };
  },
});

/**
 * A parent's estimate is the sum of its children: a ticket that gains a child (PUT
 * /tickets/{ref}/parent, POST /tickets with parentId) loses its own estimate, recorded as a
 * field change on it.
 */
export async function clearParentEstimate(sql: Db, p: Principal, parentId: string): Promise<NewEvent[]> {
  const [cleared] = await sql<{ old: number }[]>`
    with before as (select id, estimate_minutes from tickets where id = ${parentId} for no key update)
    update tickets t set estimate_minutes = null from before
    where t.id = before.id and before.estimate_minutes is not null
    returning before.estimate_minutes as old`;
  if (!cleared) return [];
  return [
    {
      workspaceId: p.workspaceId,
      ticketId: parentId,
      kind: 'field_changed',
      actorId: p.identityId,
      payload: { field: 'estimateMinutes', old: cleared.old, new: null, reason: 'became_parent' },
    },
  ];
}

/**
 * Would making `parentId` the parent of `ticketId` keep the parent forest sound? Walks every
 * ticket of the workspace, visible or not: integrity does not depend on who asks. Call it with
 * the `parents` graph lock held.
 * - `own_ancestor`: the new parent is one of the ticket's own descendants.
 * - `parent_cycle`: the new parent's ancestor chain already loops without passing through the
 *   ticket (damaged data; refused rather than extended).
 * - `parent_depth`: the resulting chain, from the new parent's root down to the deepest
 *   descendant of the ticket, would exceed ten edges; `depth` is that chain's length.
 */
export async function checkParentChain(sql: Db, ticketId: string, parentId: string): Promise<void> {
  const [up] = await sql<{ ownAncestor: boolean; looped: boolean; above: number }[]>`
    with recursive up (id, parent_id, depth, path, looped) as (
      select t.id, t.parent_id, 0, array[t.id], false from tickets t where t.id = ${parentId}::uuid
      union all
      select t.id, t.parent_id, up.depth + 1, up.path || t.id, t.id = any(up.path)
      from up join tickets t on t.id = up.parent_id
      where not up.looped and up.depth < 64
    )
    select coalesce(bool_or(id = ${ticketId}::uuid), false) as "ownAncestor", coalesce(bool_or(looped), false) as looped,
           coalesce(max(depth) filter (where not looped), 0)::integer as above
    from up`;
  if (up!.ownAncestor) throw conflict('own_ancestor', { field: 'parentId' }, 'The new parent is a descendant of this ticket.');
  if (up!.looped) throw conflict('parent_cycle', { field: 'parentId' }, "The new parent's ancestors form a cycle.");
  const [down] = await sql<{ below: number }[]>`
    with recursive down (id, depth) as (
      select ${ticketId}::uuid, 0
      union
      select c.id, d.depth + 1 from down d join tickets c on c.parent_id = d.id where d.depth < 64
    )
    select max(depth)::integer as below from down`;
  const depth = up!.above + 1 + down!.below;
  if (depth > MAX_PARENT_CHAIN) {
    throw conflict('parent_depth', { depth, max: MAX_PARENT_CHAIN }, `A parent chain is at most ${MAX_PARENT_CHAIN} edges; this one would have ${depth}.`);
  }
}
