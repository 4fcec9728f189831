import { z } from 'zod';
import { dateOut, dateTimeOut, describing, uuidOut } from '../response-schema.ts';
import type { PersonRef, TicketList, TicketSummary } from './summary.ts';

/** Response schemas of the contract's TicketSummary and TicketList (the OpenAPI document's, issue 15). */

const named = z.object({ id: uuidOut, name: z.string() });
const keyed = z.object({ id: uuidOut, key: z.string(), name: z.string() });
const category = z.enum(['open', 'closed']);

export const personRefSchema = describing<PersonRef>()(
  z.object({ id: uuidOut, name: z.string(), clientName: z.string().nullable().describe("The person's client, for client users.") }).meta({ id: 'PersonRef' }),
);

export const ticketSummarySchema = describing<TicketSummary>()(
  z
    .object({
      id: uuidOut,
      humanId: z.string().describe('PREFIX-N (Inbox tickets: INBOX-N).'),
      title: z.string(),
      kind: keyed,
      state: keyed.extend({ category, position: z.number().int() }),
      priority: keyed.extend({ position: z.number().int() }),
      project: keyed.nullable().describe('Null for Inbox tickets.'),
      queue: z.enum(['inbox', 'review']).nullable().describe('`inbox` for Inbox tickets; `review` is reserved and never produced.'),
      assignee: personRefSchema.nullable(),
      reporter: personRefSchema.nullable(),
      billingClient: named.nullable(),
      labels: z.array(named),
      dueDate: dateOut.nullable(),
      startDate: dateOut.nullable(),
      estimateMinutes: z.number().int().nullable(),
      parentId: uuidOut.nullable().describe('Null also when the parent is not visible to the caller.'),
      commentCount: z.number().int().describe('Comments the caller may read.'),
      createdAt: dateTimeOut,
      updatedAt: dateTimeOut,
    })
    .meta({ id: 'TicketSummary' }),
);

export const ticketListSchema = describing<TicketList>()(
  z
    .object({
      items: z.array(ticketSummarySchema),
      nextCursor: z.string().nullable().describe('The `cursor` of the next page; null on the last page.'),
    })
    .meta({ id: 'TicketList' }),
);
