import { z } from 'zod';
import { describing, uuidOut } from '../response-schema.ts';
import { ticketSummarySchema } from '../tickets/summary-schema.ts';
import type { Board } from './board.ts';
import type { MyWork } from './my.ts';

/** Response schemas of the contract's Board and MyWork. */

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
