import type { Ctx } from '../ctx.ts';
import type { TicketFacts } from './load.ts';

/** The `time` object of a TicketPage (contract): minutes logged on the ticket. */
export interface TicketTime {
  /** Workspace users only. */
  loggedMinutes?: number;
  billableMinutes: number;
  unbilledMinutes: number;
}

/**
 * The place where the time-tracking area fills `TicketPage.time`: return the figures the
 * caller may read, or null when they may read none. It must cost a fixed number of statements
 * (the page's statement count is constant). Until time tracking lands it is always null.
 */
export async function ticketPageTime(_ctx: Ctx, _facts: TicketFacts): Promise<TicketTime | null> {
  return null;
}
