import { z } from 'zod';
import type { Db } from '../../db/connect.ts';
import type { Principal } from '../auth/principal.ts';
import type { Ctx } from '../ctx.ts';
import { invalid, notFound } from '../errors.ts';
import { daysBetween } from './dates.ts';
import { ticketIdSql } from '../tickets/ref.ts';

type Fragment = ReturnType<Db>;

/** The most minutes one entry may carry: one day's worth on one date. */
export const MAX_ENTRY_MINUTES = 1440;
/** How far ahead of the caller's today an entry may be dated (bounds automatic period creation). */
export const MAX_DAYS_AHEAD = 366;

/** The app's one date schema (src/core/input.ts), re-exported for the time operations. */
export { dateSchema } from '../input.ts';
export const clockSchema = z
  .string()
  .regex(/^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/, 'Use HH:MM or HH:MM:SS (24-hour clock).')
  .describe('Wall-clock start time in the author’s timezone, HH:MM or HH:MM:SS; null when unknown');
export const noteSchema = z.string().max(10_000).describe('Internal note for staff, never shown to clients; at most 10,000 characters');

/** Refuses dates so far ahead that they cannot be work (and would open periods for years). */
export function assertWithinHorizon(date: string, today: string, field: string): void {
  if (daysBetween(today, date) > MAX_DAYS_AHEAD) {
    throw invalid('date_out_of_range', { field }, `${field} may be at most ${MAX_DAYS_AHEAD} days after today.`);
  }
}

export interface StaffMember {
  timezone: string;
  weeklyTargetMinutes: number | null;
  /** Project membership override first, then the membership default. */
  categoryId: string | null;
}

/**
 * A workspace user's time settings (null when the identity is not a workspace user here). The
 * category takes the project membership override of `ticketId`'s project first.
 */
export async function staffMember(sql: Db, workspaceId: string, identityId: string, ticketRef: string | null = null): Promise<StaffMember | null> {
  // a human id is resolved inside this query, so a caller can pipeline it beside loadTicket
  const ticketId = ticketRef === null ? sql`null::uuid` : ticketIdSql(sql, workspaceId, ticketRef);
  const [row] = await sql<StaffMember[]>`
    select m.timezone, m.weekly_target_minutes as "weeklyTargetMinutes",
           coalesce((select pm.category_id from project_memberships pm
                     where pm.identity_id = m.identity_id and pm.project_id = (select t.project_id from tickets t where t.id = ${ticketId})),
                    m.category_id) as "categoryId"
    from memberships m
    where m.workspace_id = ${workspaceId} and m.identity_id = ${identityId} and m.role not in ('client', 'client_elevated')`;
  return row ?? null;
}

/** The entries a principal can address at all: its workspace, narrowed by a token's project allow-list. */
export function entryScope(sql: Db, p: Principal, alias = 'e'): Fragment {
  const e = sql(alias);
  return sql`${e}.workspace_id = ${p.workspaceId}${p.projectIds ? sql` and ${e}.project_id = any(${p.projectIds as string[]}::uuid[])` : sql``}`;
}

export interface LockedEntry {
  id: string;
  workspaceId: string;
  ticketId: string;
  userId: string;
  projectId: string;
  billingClientId: string | null;
  categoryId: string | null;
  periodId: string;
  spentOn: string;
  startedAt: string | null;
  timezone: string;
  minutes: number;
  note: string | null;
  billable: boolean;
  correctsEntryId: string | null;
  billed: boolean;
  periodClosed: boolean;
  hasCorrections: boolean;
}

/**
 * Loads an entry for a change, locking its ticket, then the root of its correction chain (the
 * original, or the entry itself), then the entry, then its period `for share` so a concurrent
 * close waits.
 * Always locking the root first keeps concurrent corrections of one entry serialised and
 * deadlock-free, which is what keeps the running net from going below zero.
 */
export async function lockEntry(ctx: Ctx, id: string): Promise<LockedEntry> {
  const { sql, principal: p } = ctx;
  // The ticket row first: every timeline write takes it too, so ticket -> entries is the one lock order.
  const [ticket] = await sql`
    select t.id from tickets t where t.id = (select e.ticket_id from time_entries e where e.id = ${id} and ${entryScope(sql, p)})
    for no key update`;
  if (!ticket) throw notFound(undefined, undefined, 'No such time entry.');
  await sql`
    select r.id from time_entries r where r.id = (select coalesce(e.corrects_entry_id, e.id) from time_entries e where e.id = ${id})
    for update`;
  const [row] = await sql<LockedEntry[]>`
    select e.id, e.workspace_id as "workspaceId", e.ticket_id as "ticketId", e.user_id as "userId", e.project_id as "projectId",
           e.billing_client_id as "billingClientId", e.category_id as "categoryId", e.period_id as "periodId",
           e.spent_on::text as "spentOn", e.started_at::text as "startedAt", e.timezone, e.minutes, e.note, e.billable,
           e.corrects_entry_id as "correctsEntryId", e.billed,
           exists (select 1 from time_entries c where c.corrects_entry_id = e.id) as "hasCorrections"
    from time_entries e where e.id = ${id}
    for update`;
  if (!row) throw notFound(undefined, undefined, 'No such time entry.');
  const [period] = await sql<{ closed: boolean }[]>`select closed_at is not null as closed from periods where id = ${row.periodId} for share`;
  return { ...row, periodClosed: period!.closed };
}

/**
 * Takes the ticket's row lock (the one every timeline write takes at its end) ahead of other
 * locks, so that time writes lock in one order: ticket, then entries and period creation.
 */
export async function lockTicketRow(sql: Db, ticketId: string): Promise<void> {
  const rows = await sql`select 1 from tickets where id = ${ticketId} for no key update`;
  // Deleted since it was loaded: the writer lost the race and answers as for any unknown ticket.
  if (rows.length === 0) throw notFound();
}

/** The running net of an original entry and all its corrections. */
export async function chainNet(sql: Db, rootId: string): Promise<number> {
  const [row] = await sql<{ net: number }[]>`
    select coalesce(sum(minutes), 0)::int as net from time_entries where id = ${rootId} or corrects_entry_id = ${rootId}`;
  return row!.net;
}

export const netNegative = () => invalid('net_negative', undefined, 'An entry and its corrections may not add up to less than zero minutes.');
