import type { Ctx } from '../ctx.ts';
import { ticketTime, type TicketTime } from '../time/ticket-time.ts';
import type { TicketFacts } from '../access/facts.ts';

export type { TicketTime };

/**
 * The `time` object of a TicketPage: the figures the caller may read, or null when they may
 * read none. One statement, so the page's statement count stays fixed.
 */
export async function ticketPageTime(ctx: Ctx, facts: TicketFacts): Promise<TicketTime | null> {
  return ticketTime(ctx, facts.id, facts);
}
