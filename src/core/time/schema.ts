import { z } from 'zod';
import { periodSchema, type Period } from '../periods/schema.ts';
import { dateOut, dateTimeOut, describing, uuidOut } from '../response-schema.ts';

/** The contract's TimeEntry and Week (GET /time), and their response schemas. */

/** The contract's TimeEntry. */
export interface TimeEntry {
  id: string;
  ticketId: string;
  /** Null when the ticket is outside the caller's sight (ticketHidden). */
  ticketRef: string | null;
  title: string | null;
  /** The ticket has left the caller's sight (or a token's allow-list): it is not named. */
  ticketHidden: boolean;
  userId: string;
  userName: string;
  projectId: string;
  projectName: string;
  billingClientId: string | null;
  clientName: string | null;
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
  closedAt: string | null;
  closedBy: string | null;
}

/** The contract's Week: the response of GET /time. */
export interface Week {
  entries: TimeEntry[];
  periods: Period[];
  expectedWeekMinutes: number | null;
  timezone: string;
  userId: string;
}

export const timeEntrySchema = describing<TimeEntry>()(
  z
    .object({
      id: uuidOut,
      ticketId: uuidOut,
      ticketRef: z.string().nullable().describe('Null when the ticket is outside the caller’s sight (ticketHidden).'),
      title: z.string().nullable(),
      ticketHidden: z.boolean(),
      userId: uuidOut,
      userName: z.string(),
      projectId: uuidOut,
      projectName: z.string(),
      billingClientId: uuidOut.nullable(),
      clientName: z.string().nullable(),
      categoryId: uuidOut.nullable(),
      periodId: uuidOut,
      spentOn: dateOut,
      startedAt: z.string().nullable().describe('Wall clock HH:MM:SS in `timezone`.'),
      timezone: z.string(),
      minutes: z.number().int().describe('Negative only on a correction.'),
      note: z.string().nullable(),
      billable: z.boolean(),
      correctsEntryId: uuidOut.nullable(),
      billed: z.boolean(),
      closedAt: dateTimeOut.nullable(),
      closedBy: uuidOut.nullable(),
    })
    .meta({ id: 'TimeEntry' }),
);

export const weekSchema = describing<Week>()(
  z
    .object({
      entries: z.array(timeEntrySchema),
      periods: z.array(periodSchema),
      expectedWeekMinutes: z.number().int().nullable(),
      timezone: z.string(),
      userId: uuidOut,
    })
    .meta({ id: 'Week' }),
);

/** POST /time/tickets/{id}/reattribute. */
export const reattributedSchema = z.object({ updated: z.number().int().describe('Entries pointed at the current billing client.') });
