import type { Db } from '../../db/connect.ts';
import { tx, type Ctx } from '../ctx.ts';
import { conflict, invalid, notFound } from '../errors.ts';
import { recordEvents, type NewEvent } from '../tickets/events.ts';
import type { Fragment } from '../tickets/summary.ts';

/**
 * What the four workflow lists (states, kinds, priorities, labels) share when an Owner or Admin
 * changes them (issue 22): one writer per list and workspace at a time, the one-of flags (exactly
 * one default state, ...), positions, and deleting an item with a target for the tickets that
 * use it, each moved ticket getting its `field_changed` event as a PATCH would write it.
 */

export type ListName = 'states' | 'kinds' | 'priorities' | 'labels';

/** A flag exactly one item of a list holds: it moves to another item, it is never just dropped. */
export interface OneOf {
  column: 'is_default' | 'is_customer_resolve' | 'is_inbound';
  field: 'isDefault' | 'isCustomerResolve' | 'isInbound';
  /** 409 reason for unsetting it, or deleting its holder. */
  reason: string;
  message: string;
}

/** A list with keys and positions, whose items tickets name in one column. */
export interface OrderedList {
  name: Exclude<ListName, 'labels'>;
  table: 'workflow_states' | 'ticket_kinds' | 'priorities';
  /** For messages: "workflow state". */
  what: string;
  /** 404 reason for an id that is not an item of this list in the workspace. */
  unknown: string;
  ticketColumn: 'state_id' | 'kind_id' | 'priority_id';
  /** The ticket field a PATCH changes (the event's `field`). */
  field: 'stateId' | 'kindId' | 'priorityId';
  /** The item as the API shows it, from the list's table. */
  columns: (sql: Db) => Fragment;
  flags: readonly OneOf[];
}

/** An item of an ordered list as its `columns` select it (WorkflowState, TicketKind, Priority). */
export interface Item {
  id: string;
  key: string;
  position: number;
}

const flagOf = (item: Item | null, flag: OneOf): boolean => (item as unknown as Record<string, unknown> | null)?.[flag.field] === true;

/**
 * Runs a change to the workflow in one transaction, then drops this process's cached copy
 * (src/core/cache.ts): the tables' triggers NOTIFY every process at commit, but that arrives a
 * moment later, and the caller's next GET /workflow should see its own change. Dropped after the
 * commit, so a read in between cannot cache the old workflow again.
 */
export async function changeWorkflow<T>(ctx: Ctx, list: ListName, fn: (ctx: Ctx) => Promise<T>): Promise<T> {
  const result = await tx(ctx, async (ctx) => {
    // one writer per list and workspace: the one-of flags and the positions are read, then written
    await ctx.sql`select pg_advisory_xact_lock(hashtext(${`workflow:${list}`}), hashtext(${ctx.principal.workspaceId}))`;
    return fn(ctx);
  });
  ctx.caches?.workflow.drop(ctx.principal.workspaceId);
  return result;
}

/** The item `id` of the list in the caller's workspace; `lock` takes its row (a delete: no ticket may start using it meanwhile). */
export async function findItem<R extends Item>(
  ctx: Ctx,
  list: OrderedList,
  id: string,
  opts: { field?: string; reason?: string; lock?: boolean } = {},
): Promise<R> {
  const { sql } = ctx;
  const [row] = await sql<R[]>`
    select ${list.columns(sql)} from ${sql(list.table)}
    where id = ${id} and workspace_id = ${ctx.principal.workspaceId} ${opts.lock ? sql`for update` : sql``}`;
  if (!row) throw notFound(opts.reason ?? list.unknown, { field: opts.field ?? 'id' }, `No such ${list.what} in this workspace.`);
  return row;
}

/** 409 `key_taken` when another item of the list has `key`. */
export async function assertKeyFree(ctx: Ctx, list: OrderedList, key: string, exceptId: string | null): Promise<void> {
  const [taken] = await ctx.sql`
    select 1 from ${ctx.sql(list.table)} where workspace_id = ${ctx.principal.workspaceId} and key = ${key} and id is distinct from ${exceptId}::uuid`;
  if (taken) throw conflict('key_taken', { field: 'key', key }, `Another ${list.what} has the key "${key}".`);
}

/**
 * Applies the one-of flags sent for item `id` (whose stored flags are `before`): `true` moves the
 * flag to it from whoever held it; `false` on its holder is 409 (another item must take it instead).
 */
export async function applyFlags(ctx: Ctx, list: OrderedList, id: string, before: Item | null, sent: ItemFields['flags']): Promise<void> {
  const { sql } = ctx;
  for (const flag of list.flags) {
    const want = sent[flag.field];
    const held = flagOf(before, flag);
    if (want === false && held) throw conflict(flag.reason, { field: flag.field }, flag.message);
    if (want !== true || held) continue;
    // the unique partial index allows one holder: clear the old one first
    await sql`update ${sql(list.table)} set ${sql(flag.column)} = false where workspace_id = ${ctx.principal.workspaceId} and ${sql(flag.column)}`;
    await sql`update ${sql(list.table)} set ${sql(flag.column)} = true where id = ${id}`;
  }
}

/** The next position: after every item (new items go last unless they say otherwise). */
export async function nextPosition(ctx: Ctx, list: OrderedList): Promise<number> {
  const [row] = await ctx.sql<{ next: number }[]>`
    select coalesce(max(position) + 1, 0)::int as next from ${ctx.sql(list.table)} where workspace_id = ${ctx.principal.workspaceId}`;
  return row!.next;
}

/**
 * Puts item `id` at `position` in the list's order (position, then key) and renumbers the whole
 * list 0, 1, 2, ... (priorities: the tickets' board order follows, by the trigger of sql/045).
 */
export async function place(ctx: Ctx, list: OrderedList, id: string, position: number): Promise<void> {
  const { sql } = ctx;
  const rows = await sql<{ id: string }[]>`
    select id from ${sql(list.table)} where workspace_id = ${ctx.principal.workspaceId} and id <> ${id} order by position, key`;
  const ids = rows.map((r) => r.id);
  ids.splice(Math.min(position, ids.length), 0, id);
  await sql`
    update ${sql(list.table)} t set position = (u.n - 1)::int
    from unnest(${ids}::uuid[]) with ordinality as u(id, n)
    where t.id = u.id and t.position <> (u.n - 1)::int`;
}

/** What a create or an update sends for an item of an ordered list (undefined: left as it is). */
export interface ItemFields {
  key?: string | undefined;
  name?: string | undefined;
  position?: number | undefined;
  flags: Partial<Record<OneOf['field'], boolean | undefined>>;
  /** Other columns of the list's table (a state's category), by column name. */
  columns?: Record<string, unknown>;
}

/** Columns with a value sent (postgres.js refuses undefined). */
const sentColumns = (c: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(c).filter(([, v]) => v !== undefined));

/** Adds an item (last, unless it names a position), with the one-of flags it asks for; 409 `key_taken`. */
export async function createItem<R extends Item>(ctx: Ctx, list: OrderedList, f: ItemFields & { key: string; name: string }): Promise<R> {
  const { sql } = ctx;
  await assertKeyFree(ctx, list, f.key, null);
  const values = sentColumns({ workspace_id: ctx.principal.workspaceId, key: f.key, name: f.name, position: await nextPosition(ctx, list), ...f.columns });
  const [row] = await sql<{ id: string }[]>`insert into ${sql(list.table)} ${sql(values)} returning id`;
  await applyFlags(ctx, list, row!.id, null, f.flags);
  if (f.position !== undefined) await place(ctx, list, row!.id, f.position);
  return findItem<R>(ctx, list, row!.id);
}

/** Renames, re-keys, reorders and re-flags item `before` with what was sent; 409 `key_taken` or a one-of flag's reason. */
export async function updateItem<R extends Item>(ctx: Ctx, list: OrderedList, before: R, f: ItemFields): Promise<R> {
  const { sql } = ctx;
  if (f.key !== undefined && f.key !== before.key) await assertKeyFree(ctx, list, f.key, before.id);
  const set = sentColumns({ key: f.key, name: f.name, ...f.columns });
  if (Object.keys(set).length > 0) await sql`update ${sql(list.table)} set ${sql(set)} where id = ${before.id}`;
  await applyFlags(ctx, list, before.id, before, f.flags);
  if (f.position !== undefined) await place(ctx, list, before.id, f.position);
  return findItem<R>(ctx, list, before.id);
}

/** 409 `in_use`: tickets still use the item and no target was named. */
export const inUse = (what: string, tickets: number) =>
  conflict('in_use', { tickets }, `${tickets} ticket(s) use this ${what}: name another one as moveTo to move them there.`);

/** The target of a delete: another item of the same list (404 `unknown_target`; itself is 400 `same_target`). */
export function assertOtherTarget(id: string, moveTo: string): void {
  if (moveTo === id) throw invalid('same_target', { field: 'moveTo' }, 'moveTo must be another item than the one deleted.');
}

export const unknownTarget = (what: string) => notFound('unknown_target', { field: 'moveTo' }, `moveTo is no ${what} of this workspace.`);

/** One `field_changed` event per moved ticket, as PATCH /tickets/{ref} writes it. */
export function movedEvents(ctx: Ctx, field: string, moves: { ticketId: string; old: unknown; new: unknown }[]): Promise<void> {
  const events: NewEvent[] = moves.map((m) => ({
    workspaceId: ctx.principal.workspaceId,
    ticketId: m.ticketId,
    kind: 'field_changed',
    actorId: ctx.principal.identityId,
    payload: { field, old: m.old, new: m.new },
  }));
  return recordEvents(ctx.sql, events, ctx.now());
}

/**
 * Deletes item `id` of an ordered list: a one-of flag's holder is refused (409, its reason); the
 * tickets that use it (archived ones too) move to `moveTo`, each with its event, or, with no
 * target, 409 `in_use`. `moveSet` adds what else changes on a moved ticket (a state's closedAt).
 */
export async function deleteOrdered<R extends Item>(
  ctx: Ctx,
  list: OrderedList,
  id: string,
  moveTo: string | undefined,
  moveSet?: (from: R, to: R) => Fragment | null,
): Promise<{ ok: true; moved: number }> {
  const { sql, principal: p } = ctx;
  // locked first: from here no ticket can start using it (their key-share lock waits)
  const item = await findItem<R>(ctx, list, id, { lock: true });
  for (const flag of list.flags) if (flagOf(item, flag)) throw conflict(flag.reason, { field: flag.field }, flag.message);
  if (moveTo !== undefined) assertOtherTarget(id, moveTo);
  const target = moveTo === undefined ? null : await findItem<R>(ctx, list, moveTo, { field: 'moveTo', reason: 'unknown_target' });
  const col = sql(list.ticketColumn);
  const [count] = await sql<{ n: number }[]>`select count(*)::int as n from tickets where workspace_id = ${p.workspaceId} and ${col} = ${id}`;
  const n = count!.n;
  let moved: { id: string }[] = [];
  if (n > 0) {
    if (!target) throw inUse(list.what, n);
    const extra = moveSet?.(item, target) ?? null;
    moved = await sql<{ id: string }[]>`
      update tickets set ${col} = ${target.id} ${extra ? sql`, ${extra}` : sql``}
      where workspace_id = ${p.workspaceId} and ${col} = ${id}
      returning id`;
    await movedEvents(
      ctx,
      list.field,
      moved.map((t) => ({ ticketId: t.id, old: id, new: target.id })),
    );
  }
  await sql`delete from ${sql(list.table)} where id = ${id}`;
  return { ok: true, moved: moved.length };
}
