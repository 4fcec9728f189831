import { z } from 'zod';
import { resolvePersonId } from '../../core/resolve/people.ts';
import { resolveTicketUuid } from '../../core/resolve/tickets.ts';
import { listCategories } from '../../core/time/categories.ts';
import { noteSchema } from '../../core/time/common.ts';
import { editTime, editTimeFields } from '../../core/time/edit.ts';
import { listTime, MAX_RANGE_DAYS, totalMinutes } from '../../core/time/list.ts';
import { logTime, logTimeInput } from '../../core/time/log.ts';
import { dateArg, defined, personArg, ticketArg } from '../args.ts';
import { lines } from '../shapes.ts';
import { defineTool } from '../tool.ts';

const clockArg = z.string().nullable().describe('Start time HH:MM (your timezone).');
const noteArg = noteSchema.nullable().describe('Internal note, never shown to clients.');
const idResult = z.object({ id: z.string() });

export const logTimeTool = defineTool({
  name: 'log_time',
  title: 'Log time',
  description: 'Log minutes you worked on a ticket (in a project) on a date. Entries are always yours. Returns the entry id.',
  toolset: 'time',
  op: logTime,
  input: () =>
    z.object({
      ticket: ticketArg(),
      spentOn: dateArg('Date of the work'),
      minutes: logTimeInput.shape.minutes.describe('Whole minutes worked.'),
      startedAt: clockArg.optional(),
      note: noteArg.optional(),
      billable: z.boolean().optional().describe('Default true.'),
    }),
  output: idResult,
  fields: { ticketId: 'ticket' },
  args: async (ctx, a) =>
    defined({
      ticketId: await resolveTicketUuid(ctx, a.ticket, 'ticket'),
      spentOn: a.spentOn,
      minutes: a.minutes,
      startedAt: a.startedAt,
      note: a.note,
      billable: a.billable,
    }),
});

export const updateTimeEntryTool = defineTool({
  name: 'update_time_entry',
  title: 'Update time entry',
  description: "Change your time entry (owner/admin: anyone's) in an open period: date, start, minutes, note, billable. Billed entries never change.",
  toolset: 'time',
  op: editTime,
  idempotent: true,
  fields: { id: 'entryId' },
  input: () =>
    z.object({
      entryId: z.string().describe('Time entry id.'),
      spentOn: dateArg('New date').optional(),
      startedAt: clockArg.optional(),
      minutes: editTimeFields.shape.minutes.describe('Non-zero; negative only on a correction.'),
      note: noteArg.optional(),
      billable: z.boolean().optional().describe('Billable to the client.'),
    }),
  output: idResult,
  args: (_ctx, a) => defined({ id: a.entryId, spentOn: a.spentOn, startedAt: a.startedAt, minutes: a.minutes, note: a.note, billable: a.billable }),
});

const entry = z.object({
  id: z.string(),
  ticketRef: z.string().nullable().describe('Null when the ticket is no longer visible to you'),
  title: z.string().nullable(),
  spentOn: z.string(),
  startedAt: z.string().nullable(),
  minutes: z.number(),
  billable: z.boolean(),
  billed: z.boolean(),
  note: z.string().nullable(),
  correctsEntryId: z.string().nullable(),
  closed: z.boolean().describe('Its period is closed'),
});

export const getTimeEntriesTool = defineTool({
  name: 'get_time_entries',
  title: 'Get time entries',
  description: `Time entries of one person (default you; others need owner/admin) between two dates (at most ${MAX_RANGE_DAYS} days), oldest first, with the total.`,
  toolset: 'time',
  op: listTime,
  idempotent: true,
  input: () =>
    z.object({
      from: dateArg('First day'),
      to: dateArg('Last day (inclusive)'),
      user: personArg('Whose entries').optional(),
      ticket: ticketArg('Only this ticket').optional(),
    }),
  output: z.object({
    userId: z.string(),
    timezone: z.string(),
    expectedWeekMinutes: z.number().nullable(),
    totalMinutes: z.number(),
    entries: z.array(entry),
  }),
  fields: { userId: 'user', ticketId: 'ticket' },
  args: async (ctx, a) => {
    const [userId, ticketId] = await Promise.all([
      a.user === undefined ? undefined : resolvePersonId(ctx, a.user, 'user', { history: true }),
      a.ticket === undefined ? undefined : resolveTicketUuid(ctx, a.ticket, 'ticket'),
    ]);
    return defined({ from: a.from, to: a.to, userId, ticketId });
  },
  result: (week) => ({
    userId: week.userId,
    timezone: week.timezone,
    expectedWeekMinutes: week.expectedWeekMinutes,
    totalMinutes: totalMinutes(week.entries),
    entries: week.entries.map((e) => ({
      id: e.id,
      ticketRef: e.ticketRef,
      title: e.title,
      spentOn: e.spentOn,
      startedAt: e.startedAt,
      minutes: e.minutes,
      billable: e.billable,
      billed: e.billed,
      note: e.note,
      correctsEntryId: e.correctsEntryId,
      closed: e.closedAt !== null,
    })),
  }),
  text: (w) =>
    [
      `Total ${w.totalMinutes} min (${w.timezone})`,
      lines(
        w.entries,
        (e) =>
          `${e.spentOn} ${e.minutes} min ${e.ticketRef ?? '(hidden ticket)'}${e.billable ? '' : ' non-billable'}${e.billed ? ' billed' : ''} [${e.id}]${e.note ? ` ${e.note}` : ''}`,
        'No entries.',
      ),
    ].join('\n'),
});

export const listCategoriesTool = defineTool({
  name: 'list_categories',
  title: 'List consultant categories',
  description: 'The consultant categories people bill as (e.g. "Senior developer").',
  toolset: 'time',
  op: listCategories,
  idempotent: true,
  input: () => z.object({}),
  output: z.object({ categories: z.array(z.object({ id: z.string(), name: z.string() })) }),
  args: () => ({}),
  text: (c) => lines(c.categories, (x) => x.name, 'No categories.'),
});
