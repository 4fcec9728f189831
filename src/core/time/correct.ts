import { z } from 'zod';
import { idField, withReasons } from '../validation.ts';
import { defineOp } from '../operation.ts';
import { idSchema } from '../response-schema.ts';
import { conflict, invalid } from '../errors.ts';
import { periodForDate } from '../periods/resolve.ts';
import { recordEvent } from '../tickets/events.ts';
import { chainNet, clockSchema, lockEntry, MAX_ENTRY_MINUTES, netNegative, noteSchema, staffMember } from './common.ts';
import { localDate, normaliseClock } from './dates.ts';

export const correctTimeFields = z.object({
  minutes: z
    .int()
    .min(-MAX_ENTRY_MINUTES)
    .max(MAX_ENTRY_MINUTES)
    .refine((m) => m !== 0, 'Minutes may not be zero.')
    .describe('Signed minutes to add to (positive) or take off (negative) the original entry; the running net never goes below zero'),
  note: noteSchema.nullable().optional(),
  startedAt: clockSchema.nullable().optional(),
});
const correctTimeInput = withReasons(correctTimeFields.extend({ id: idField('The id of the entry corrected.') }), { id: 'bad_uuid' });

/**
 * POST /time/{id}/corrections (browser session; Owner or Admin): adds a signed entry against
 * an entry of a closed period. The correction is dated today in the caller's timezone (and
 * carries that timezone), lands in today's period, and inherits the original's ticket,
 * author, project, billing client, category and billable flag. The original row is locked,
 * so concurrent corrections see each other and the net stays at or above zero.
 */
export const correctTime = defineOp({
  name: 'time.correct',
  action: 'time.correct',
  input: correctTimeInput,
  output: idSchema,
  tx: true,
  run: async (ctx, body): Promise<{ id: string }> => {
    const { sql, principal: p } = ctx;
    const id = body.id;
    const o = await lockEntry(ctx, id);
    if (o.correctsEntryId) throw invalid('correction_source', undefined, 'A correction cannot itself be corrected; correct the original entry.');
    if (!o.periodClosed) throw invalid('correction_source', undefined, 'Only entries of a closed period are corrected; edit this one instead.');
    if ((await chainNet(sql, o.id)) + body.minutes < 0) throw netNegative();
    const me = (await staffMember(sql, p.workspaceId, p.identityId))!;
    const now = ctx.now();
    const today = localDate(now, me.timezone);
    const period = await periodForDate(sql, p.workspaceId, today, today);
    if (!period || period.closed) throw conflict('today_period_closed', { spentOn: today }, "Today's period is closed; reopen it or open the next one.");
    const [row] = await sql<{ id: string }[]>`
      insert into time_entries (workspace_id, ticket_id, user_id, project_id, billing_client_id, category_id, period_id, spent_on, started_at,
                                timezone, minutes, note, billable, corrects_entry_id, created_by, created_at, updated_at)
      values (${o.workspaceId}, ${o.ticketId}, ${o.userId}, ${o.projectId}, ${o.billingClientId}, ${o.categoryId}, ${period.id}, ${today}::date,
              ${body.startedAt ? normaliseClock(body.startedAt) : null}::time, ${me.timezone}, ${body.minutes}, ${body.note ?? null}, ${o.billable},
              ${o.id}, ${p.identityId}, ${now}, ${now})
      returning id`;
    await recordEvent(
      sql,
      {
        workspaceId: o.workspaceId,
        ticketId: o.ticketId,
        kind: 'time_corrected',
        actorId: p.identityId,
        payload: { entryId: row!.id, correctsEntryId: o.id, minutes: body.minutes, spentOn: today },
      },
      now,
      { touch: 'at_commit' },
    );
    return { id: row!.id };
  },
});
