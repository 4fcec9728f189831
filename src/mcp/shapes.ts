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

const clip = (s: string, n = 160) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/**
 * The default text content of a tool without its own rendering: the top-level values on a line
 * each (lists as counts), not a second copy of the JSON, which is the structuredContent's.
 */
export function summaryText(out: Record<string, unknown>): string {
  const lines = Object.entries(out).map(([k, v]) => {
    if (Array.isArray(v)) return `${k}: ${v.length} item${v.length === 1 ? '' : 's'}`;
    if (v !== null && typeof v === 'object') return `${k}: {${Object.keys(v).slice(0, 8).join(', ')}}`;
    return `${k}: ${clip(String(v))}`;
  });
  return [...lines, '(structuredContent holds the full result.)'].join('\n');
}

/** A line per item, or `none` when the list is empty. */
export function lines<T>(items: readonly T[], line: (t: T) => string, none = 'None.'): string {
  return items.length ? items.map(line).join('\n') : none;
}

/** A ticket summary after a write: what it is now. */
export const ticketDone = (verb: string) => (t: CompactTicket) => `${verb} ${ticketLine(t)}`;
