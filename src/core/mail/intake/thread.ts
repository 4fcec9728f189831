import type { Db } from '../../../db/connect.ts';
import { humanIdTicketSql, parseHumanId } from '../../tickets/ref.ts';
import { header, messageIds, type RawMessage } from './raw.ts';

/** What a message answers, if anything. */
export type Thread =
  | { kind: 'ticket'; ticketId: string; via: 'references' | 'subject' }
  /** A timesheet email we sent: no ticket to comment on, so a new one is started that says so. */
  | { kind: 'timesheet'; number: string }
  | { kind: 'none' };

/** References kept per message: the newest; a longer chain adds nothing a reply needs. */
const MAX_REFERENCES = 50;

/** The ids a message answers, nearest first: In-Reply-To, then References from the newest. */
export function answeredIds(raw: RawMessage): string[] {
  const ids = [...messageIds(header(raw, 'in-reply-to')), ...messageIds(header(raw, 'references')).reverse()];
  return [...new Set(ids)].slice(0, MAX_REFERENCES);
}

/** `[PREFIX-N]` tokens of a subject, in order. */
export function subjectTokens(subject: string): { prefix: string; number: number }[] {
  return [...subject.matchAll(/\[([A-Za-z][A-Za-z0-9]{0,19}-\d{1,9})\]/g)].map((m) => parseHumanId(m[1]!)).filter((h) => h !== null);
}

/**
 * The ticket a message replies to: one whose stored message (the ticket's first mail, or a reply
 * already imported) In-Reply-To or References names, the nearest first; else a timesheet email of
 * ours it answers; else a `[PREFIX-N]` token of the subject that still resolves, old prefixes and
 * numbers included (ticket_refs). A named message whose ticket was deleted names nothing.
 */
export async function findThread(sql: Db, workspaceId: string, raw: RawMessage, subject: string): Promise<Thread> {
  const ids = answeredIds(raw);
  if (ids.length > 0) {
    const [stored] = await sql<{ ticketId: string }[]>`
      select m.ticket_id as "ticketId" from intake_messages m
      where m.workspace_id = ${workspaceId} and m.message_id = any(${ids}::text[]) and m.ticket_id is not null
      order by array_position(${ids}::text[], m.message_id) limit 1`;
    if (stored) return { kind: 'ticket', ticketId: stored.ticketId, via: 'references' };
    const [sent] = await sql<{ number: string }[]>`
      select s.number from document_deliveries d join timesheets s on s.id = d.timesheet_id
      where d.workspace_id = ${workspaceId} and btrim(d.message_id, '<> ') = any(${ids}::text[]) and d.message_id is not null
      order by array_position(${ids}::text[], btrim(d.message_id, '<> ')) limit 1`;
    if (sent) return { kind: 'timesheet', number: sent.number };
  }
  for (const token of subjectTokens(subject)) {
    const [row] = await sql<{ ticketId: string }[]>`select (${humanIdTicketSql(sql, workspaceId, token)}) as "ticketId"`;
    if (row?.ticketId) return { kind: 'ticket', ticketId: row.ticketId, via: 'subject' };
  }
  return { kind: 'none' };
}
