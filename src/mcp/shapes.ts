import { z } from 'zod';
import type { TicketSummary } from '../core/tickets/summary.ts';

/**
 * Output shapes shared by several tools. Ids and datetimes are plain strings here: the values
 * come from the core, and a uuid or date-time pattern repeated in every output schema would
 * cost a model thousands of tokens per tools/list.
 */

/** A ticket in a list (state, assignee, priority by name): enough to choose one, and every field is valid input to another tool. */
export const compactTicket = z.object({
  id: z.string(),
  humanId: z.string(),
  title: z.string(),
  state: z.string(),
  assignee: z.string().nullable(),
  priority: z.string(),
  dueDate: z.string().nullable(),
  updatedAt: z.string(),
});
export type CompactTicket = z.output<typeof compactTicket>;

export function compact(s: TicketSummary): CompactTicket {
  return {
    id: s.id,
    humanId: s.humanId,
    title: s.title,
    state: s.state.name,
    assignee: s.assignee?.name ?? null,
    priority: s.priority.name,
    dueDate: s.dueDate,
    updatedAt: s.updatedAt,
  };
}

export const ticketList = z.object({ items: z.array(compactTicket), nextCursor: z.string().nullable() });

export const ok = z.object({ ok: z.literal(true) });

export const named = z.object({ id: z.string(), name: z.string() });
export const keyed = z.object({ id: z.string(), key: z.string(), name: z.string() });
export const person = z.object({ id: z.string(), name: z.string(), clientName: z.string().nullable() });

/** One line per ticket, for clients that read only the text content. */
export function ticketLine(t: CompactTicket): string {
  const who = t.assignee ? `, ${t.assignee}` : '';
  const due = t.dueDate ? `, due ${t.dueDate}` : '';
  return `${t.humanId} [${t.state}, ${t.priority}${who}${due}] ${t.title}`;
}

/** A ticket list as text: one line per ticket, then where to continue. */
export function ticketListText(list: { items: CompactTicket[]; nextCursor: string | null }): string {
  const lines = list.items.map(ticketLine);
  if (list.items.length === 0) lines.push('No tickets.');
  if (list.nextCursor) lines.push(`More: cursor=${list.nextCursor}`);
  return lines.join('\n');
}
