import { z } from 'zod';
import type { Db } from '../../db/connect.ts';
import { idField, withReasons } from '../validation.ts';
import { defineOp } from '../operation.ts';
import { conflict, notFound } from '../errors.ts';
import { dateSchema } from '../input.ts';
import { staffMember } from '../time/common.ts';
import { addDays, localDate, monthEnd, monthStart } from '../time/dates.ts';
import { lockPeriodCreation, periodBounds } from './resolve.ts';
import { periodListSchema, periodSchema, type Period } from './schema.ts';

export type { Period } from './schema.ts';

export const openPeriodInput = z.object({
  periodStart: dateSchema
    .optional()
    .describe(
      'Only for the very first period: the day it starts (default: the first of the current month). Later periods always start the day after the last one ends.',
    ),
});

/** POST /periods/{id}/close and /reopen: the period. */
const periodByIdInput = withReasons(z.object({ id: idField('The period id.') }), { id: 'bad_uuid' });

/** The Period columns, aliased to the contract's names. */
export const periodColumns = (sql: Db) => sql`
  id, period_start::text as "periodStart", period_end::text as "periodEnd",
  to_char(closed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "closedAt", closed_by as "closedBy"`;

/** GET /periods: every period of the workspace, oldest first. */
export const listPeriods = defineOp({
  name: 'periods.list',
  action: 'periods.list',
  input: z.object({}),
  output: periodListSchema,
  run: async (ctx): Promise<{ periods: Period[] }> => {
    const periods = await ctx.sql<Period[]>`
      select ${periodColumns(ctx.sql)} from periods where workspace_id = ${ctx.principal.workspaceId} order by period_start`;
    return { periods: [...periods] };
  },
});

/**
 * POST /periods: opens the next contiguous period (the calendar month after the last one).
 * The very first period starts at `periodStart`, by default the first of the caller's current month.
 */
export const openPeriod = defineOp({
  name: 'periods.open',
  action: 'periods.open',
  // audited, as every administrative write is whatever the door: periods decide what can be billed
  audit: { action: 'periods.open', target: (s) => (typeof s.periodStart === 'string' ? s.periodStart : null) },
  input: openPeriodInput,
  output: periodSchema,
  tx: true,
  run: async (ctx, body): Promise<Period> => {
    const { sql, principal: p } = ctx;
    await lockPeriodCreation(sql, p.workspaceId);
    const bounds = await periodBounds(sql, p.workspaceId);
    let start: string;
    if (bounds) {
      start = addDays(bounds.last, 1);
      if (body.periodStart && body.periodStart !== start) {
        throw conflict('period_not_contiguous', { periodStart: start }, `The next period must start on ${start}.`);
      }
    } else {
      const me = await staffMember(sql, p.workspaceId, p.identityId);
      start = body.periodStart ?? monthStart(localDate(ctx.now(), me?.timezone ?? 'UTC'));
    }
    const [row] = await sql<Period[]>`
      insert into periods (workspace_id, period_start, period_end) values (${p.workspaceId}, ${start}::date, ${monthEnd(start)}::date)
      returning ${periodColumns(sql)}`;
    return row!;
  },
});

async function lockPeriod(sql: Db, workspaceId: string, id: string): Promise<{ closed: boolean }> {
  const [row] = await sql<{ closed: boolean }[]>`
    select closed_at is not null as closed from periods where id = ${id} and workspace_id = ${workspaceId} for update`;
  if (!row) throw notFound(undefined, undefined, 'No such period.');
  return row;
}

/** POST /periods/{id}/close: freezes the work facts of every entry in the period. Closing a closed period changes nothing. */
export const closePeriod = defineOp({
  name: 'periods.close',
  action: 'periods.close',
  audit: { action: 'periods.close', target: (s) => (typeof s.id === 'string' ? s.id : null) },
  input: periodByIdInput,
  output: periodSchema,
  tx: true,
  run: async (ctx, { id }): Promise<Period> => {
    const { sql, principal: p } = ctx;
    const { closed } = await lockPeriod(sql, p.workspaceId, id);
    const [row] = closed
      ? await sql<Period[]>`select ${periodColumns(sql)} from periods where id = ${id}`
      : await sql<Period[]>`update periods set closed_at = ${ctx.now()}, closed_by = ${p.identityId} where id = ${id} returning ${periodColumns(sql)}`;
    return row!;
  },
});

/** POST /periods/{id}/reopen: refused once a billing run allocated any entry of the period. */
export const reopenPeriod = defineOp({
  name: 'periods.reopen',
  action: 'periods.reopen',
  audit: { action: 'periods.reopen', target: (s) => (typeof s.id === 'string' ? s.id : null) },
  input: periodByIdInput,
  output: periodSchema,
  tx: true,
  run: async (ctx, { id }): Promise<Period> => {
    const { sql, principal: p } = ctx;
    await lockPeriod(sql, p.workspaceId, id);
    const [billed] = await sql`select 1 from time_entries where period_id = ${id} and billed limit 1`;
    if (billed) throw conflict('period_billed', undefined, 'Entries of this period are billed; void the billing run first.');
    const [row] = await sql<Period[]>`update periods set closed_at = null, closed_by = null where id = ${id} returning ${periodColumns(sql)}`;
    return row!;
  },
});
