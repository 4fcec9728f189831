import type { Db } from '../../db/connect.ts';
import { conflict } from '../errors.ts';

/**
 * Refuses to delete a ticket whose time is locked: any billed entry (409 `ticket_billed`) or any
 * entry in a closed period (409 `period_closed`). The entries are locked `for share` and their
 * periods too, so a billing run or a period close racing the delete waits for it.
 */
export async function assertTicketTimeUnlocked(sql: Db, ticketId: string): Promise<void> {
  const entries = await sql<{ billed: boolean; periodId: string }[]>`
    select billed, period_id as "periodId" from time_entries where ticket_id = ${ticketId} for share`;
  if (entries.length === 0) return;
  if (entries.some((e) => e.billed)) throw conflict('ticket_billed', undefined, 'Time on this ticket is billed; redact the ticket instead.');
  const periodIds = [...new Set(entries.map((e) => e.periodId))];
  const [closed] = await sql`select 1 from periods where id = any(${periodIds}::uuid[]) and closed_at is not null for share`;
  if (closed) throw conflict('period_closed', undefined, 'Time on this ticket lies in a closed period; redact the ticket instead.');
}
