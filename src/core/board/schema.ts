import { z } from 'zod';
import { describing, uuidOut } from '../response-schema.ts';
import { ticketSummarySchema } from '../tickets/summary-schema.ts';
import type { TicketSummary } from '../tickets/summary.ts';

/** Response schemas of the contract's Board and MyWork, beside the types the operations return. */

export interface BoardColumn {
  state: { id: string; key: string; name: string; category: 'open' | 'closed' };
  /** Tickets in the column after filtering and visibility. */
  total: number;
  /** The first page in board order. */
  tickets: TicketSummary[];
  /** Feeds GET /board/{stateId}; null when the column is complete. */
  nextCursor: string | null;
}

export interface Board {
  columns: BoardColumn[];
}

export interface MyWork {
  assigned: TicketSummary[];
  reported: TicketSummary[];
  watching: TicketSummary[];
  dueSoon: TicketSummary[];
}

export const boardSchema = describing<Board>()(
  z
    .object({
      columns: z.array(
        z.object({
          state: z.object({ id: uuidOut, key: z.string(), name: z.string(), category: z.enum(['open', 'closed']) }),
          total: z.number().int().describe('Tickets in the column after filtering and visibility.'),
          tickets: z.array(ticketSummarySchema).describe('The first page in board order.'),
          nextCursor: z.string().nullable().describe('Feeds GET /board/{stateId}; null when the column is complete.'),
        }),
      ),
    })
    .meta({ id: 'Board' }),
);

export const myWorkSchema = describing<MyWork>()(
  z
    .object({
      assigned: z.array(ticketSummarySchema),
      reported: z.array(ticketSummarySchema),
      watching: z.array(ticketSummarySchema),
      dueSoon: z.array(ticketSummarySchema),
    })
    .meta({ id: 'MyWork' }),
);
