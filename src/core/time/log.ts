import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { authorize } from '../access/authorize.ts';
import { conflict, invalid } from '../errors.ts';
import { findPeriod, periodForDate } from '../periods/resolve.ts';
import { recordEvent } from '../tickets/events.ts';
import { holdTickets } from '../tickets/concurrency.ts';
import { loadTicket } from '../tickets/load.ts';
import { HUMAN_ID_PATTERN } from '../tickets/ref.ts';
import { assertWithinHorizon, clockSchema, dateSchema, lockTicketRow, MAX_ENTRY_MINUTES, noteSchema, staffMember } from './common.ts';
import { localDate, normaliseClock } from './dates.ts';
import { defineOp } from '../operation.ts';
import { settledLater } from '../settled-later.ts';
import { UUID_PATTERN } from '../validation.ts';
import { idSchema } from '../response-schema.ts';

export const logTimeInput = z.object({
  ticketId: z
    .union([z.uuid(), z.string().regex(HUMAN_ID_PATTERN)])
    .describe('The ticket the work was on, by UUID or human id (PREFIX-N, as MCP takes it); it must be in a project (not the Inbox)'),
  spentOn: dateSchema.describe('Local date the work was done, YYYY-MM-DD, in an open period'),
  startedAt: clockSchema.nullable().optional(),
  minutes: z.int().min(1).max(MAX_ENTRY_MINUTES).describe(`Duration in whole minutes, 1 to ${MAX_ENTRY_MINUTES}`),
  note: noteSchema.nullable().optional(),
  billable: z.boolean().default(true).describe('Whether the work is billable to the client; default true'),
});
export type LogTimeInput = z.input<typeof logTimeInput>;

/**
 * POST /time: logs a date plus minutes on a ticket, always as the caller. The entry is
 * attributed to the ticket's project and billing client and the caller's consultant category
 * (project membership override first, then the membership default), and carries the caller's
 * timezone, in which `startedAt` is a wall-clock time.
 */
export const logTime = defineOp({
  name: 'time.log',
  action: 'time.log',
  input: logTimeInput,
  output: idSchema,
  tx: true,
  run: async (ctx, body): Promise<{ id: string }> => {
    const p = ctx.principal;
    const { sql } = ctx;
    // A ticket named by its UUID is held first: one round trip with the three independent reads
    // (pipelined on the transaction's connection; a human id is resolved in each), and a
    // concurrent DELETE then waits for this transaction from the start. A human id is held once
    // loaded, as before.
    const early = UUID_PATTERN.test(body.ticketId) ? settledLater(holdTickets(sql, [body.ticketId.toLowerCase()])) : null;
    const [ticket, member, existing] = await Promise.all([
      loadTicket(ctx, body.ticketId),
      staffMember(sql, p.workspaceId, p.identityId, body.ticketId),
      findPeriod(sql, p.workspaceId, body.spentOn),
    ]);
    if (!ticket.projectId) throw invalid('ticket_unrouted', { field: 'ticketId' }, 'Route the ticket out of the Inbox before logging time on it.');
    authorize(ctx, 'time.log', ticket);
    const me = member!;
    const now = ctx.now();
    const today = localDate(now, me.timezone);
    assertWithinHorizon(body.spentOn, today, 'spentOn');
    // held early: deleted before the hold (the reads then found no ticket, so not reached)
    if (early) await early;
    let period = existing;
    if (!period) {
      // Opening periods takes a workspace-wide lock; take the ticket's row lock first, the order
      // every other time write uses, so the two cannot deadlock. The common path locks nothing early.
      await lockTicketRow(sql, ticket.id);
      period = await periodForDate(sql, p.workspaceId, body.spentOn, today);
    } else if (!early) {
      // keeps a concurrent DELETE of the ticket from landing between these checks and the insert
      await holdTickets(sql, [ticket.id]);
    }
    if (!period) throw conflict('before_first_period_note', { field: 'spentOn' }, 'The date lies before the first period; time cannot be logged there.');
    if (period.closed) throw conflict('closed_period_log', { periodId: period.id }, 'The period of this date is closed.');
    const id = randomUUID();
    const insert = sql`
      insert into time_entries (id, workspace_id, ticket_id, user_id, project_id, billing_client_id, category_id, period_id,
                                spent_on, started_at, timezone, minutes, note, billable, created_by, created_at, updated_at)
      values (${id}, ${p.workspaceId}, ${ticket.id}, ${p.identityId}, ${ticket.projectId}, ${ticket.billingClientId}, ${me.categoryId}, ${period.id},
              ${body.spentOn}::date, ${body.startedAt ? normaliseClock(body.startedAt) : null}::time, ${me.timezone}, ${body.minutes},
              ${body.note ?? null}, ${body.billable}, ${p.identityId}, ${now}, ${now})`.execute(); // started now: before the event's statements
    const event = recordEvent(
      sql,
      {
        workspaceId: p.workspaceId,
        ticketId: ticket.id,
        kind: 'time_logged',
        actorId: p.identityId,
        payload: { entryId: id, minutes: body.minutes, spentOn: body.spentOn },
      },
      now,
      { touch: 'at_commit' },
    );
    // pipelined too; the ticket is held, so a concurrent DELETE waits for this transaction
    await Promise.all([insert, event]);
    return { id };
  },
});
