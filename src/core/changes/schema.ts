import { z } from 'zod';
import { dateTimeOut, describing, uuidOut } from '../response-schema.ts';

export interface Change {
  seq: number;
  ticketId: string;
  humanId: string;
  /** A timeline event kind, `deleted`, or `gone` when the ticket left the caller's sight. */
  kind: string;
  at: string;
}

export interface ChangePage {
  changes: Change[];
  nextAfter: number;
  pollAfterSeconds: number;
}

/** Response schema of GET /changes. */
export const changePageSchema = describing<ChangePage>()(
  z
    .object({
      changes: z.array(
        z.object({
          seq: z.number().int(),
          ticketId: uuidOut,
          humanId: z.string(),
          kind: z.string().describe('A timeline event kind, `deleted`, or `gone` when the ticket left the caller’s sight.'),
          at: dateTimeOut,
        }),
      ),
      nextAfter: z.number().int().describe('Send it as `after` to read on.'),
      pollAfterSeconds: z.number().int().describe('When to ask again (also in `X-Poll-Interval`).'),
    })
    .meta({ id: 'ChangePage' }),
);
