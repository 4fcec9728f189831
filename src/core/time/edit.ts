import { z } from 'zod';
import type { Db } from '../../db/connect.ts';
import { idField, withReasons } from '../validation.ts';
import { defineOp } from '../operation.ts';
import { idSchema } from '../response-schema.ts';
import { clientOnProject } from '../access/visible.ts';
import { requireAdmin, requireSession } from '../auth/guards.ts';
import { isAdminRole } from '../auth/principal.ts';
import type { Ctx } from '../ctx.ts';
import { conflict, forbidden, invalid, notFound } from '../errors.ts';
import { periodForDate } from '../periods/resolve.ts';
import { recordEvent } from '../tickets/events.ts';
import {
  assertWithinHorizon,
  chainNet,
  clockSchema,
  dateSchema,
  lockEntry,
  MAX_ENTRY_MINUTES,
  netNegative,
  noteSchema,
  staffMember,
  type LockedEntry,
} from './common.ts';
import { localDate, normaliseClock } from './dates.ts';

export const editTimeFields = z.object({
  spentOn: dateSchema.optional().describe('Move the entry to another date, YYYY-MM-DD, in an open period; fixed on a correction'),
  startedAt: clockSchema.nullable().optional(),
  minutes: z
    .int()
    .min(-MAX_ENTRY_MINUTES)
    .max(MAX_ENTRY_MINUTES)
    .refine((m) => m !== 0, 'Minutes may not be zero.')
    .optional()
    .describe('New duration in minutes, non-zero; negative only on a correction'),
  note: noteSchema.nullable().optional(),
  billable: z.boolean().optional().describe('Whether the work is billable'),
  billingClientId: z.uuid().nullable().optional().describe('Owner/Admin in a browser session only: the client the entry is billed to'),
  categoryId: z.uuid().nullable().optional().describe('Owner/Admin in a browser session only: the consultant category'),
  correctsEntryId: z.uuid().nullable().optional().describe('Read-only; sending a different value is refused'),
});
const editTimeInput = withReasons(editTimeFields.extend({ id: idField('The time entry id.') }), { id: 'bad_uuid' });

type Body = z.output<typeof editTimeInput>;
type Field = 'spentOn' | 'startedAt' | 'minutes' | 'note' | 'billable' | 'billingClientId' | 'categoryId';
const WORK_FACTS: Field[] = ['spentOn', 'startedAt', 'minutes', 'note'];
const ATTRIBUTION: Field[] = ['billingClientId', 'categoryId'];
/** What a correction inherits from its original and must keep sharing with it. */
const SHARED_WITH_CHAIN: Field[] = [...ATTRIBUTION, 'billable'];

/** The fields whose sent value differs from the stored one: sending back what was read changes nothing. */
function changedFields(e: LockedEntry, b: Body): Field[] {
  const changed: Field[] = [];
  if (b.spentOn !== undefined && b.spentOn !== e.spentOn) changed.push('spentOn');
  if (b.startedAt !== undefined && (b.startedAt === null ? null : normaliseClock(b.startedAt)) !== e.startedAt) changed.push('startedAt');
  if (b.minutes !== undefined && b.minutes !== e.minutes) changed.push('minutes');
  if (b.note !== undefined && b.note !== e.note) changed.push('note');
  if (b.billable !== undefined && b.billable !== e.billable) changed.push('billable');
  if (b.billingClientId !== undefined && b.billingClientId?.toLowerCase() !== e.billingClientId && !(b.billingClientId === null && e.billingClientId === null))
    changed.push('billingClientId');
  if (b.categoryId !== undefined && b.categoryId?.toLowerCase() !== e.categoryId && !(b.categoryId === null && e.categoryId === null))
    changed.push('categoryId');
  return changed;
}

/**
 * PATCH /time/{id}. Own entries; Owner or Admin may edit anyone's. Attribution (billing client,
 * category) is Owner/Admin from a browser session only. In a closed period only billable and
 * attribution may change, by Owner/Admin from a session. A billed entry never changes.
 * A correction and its original keep one attribution and billable flag (`attribution_diverges`), and their
 * running net never goes below zero.
 */
export const editTime = defineOp({
  name: 'time.edit',
  action: 'time.edit',
  input: editTimeInput,
  output: idSchema,
  tx: true,
  run: async (ctx, body): Promise<{ id: string }> => {
    const p = ctx.principal;
    const id = body.id;
    const { sql } = ctx;
    const e = await lockEntry(ctx, id);
    const admin = isAdminRole(p.role);
    if (e.userId !== p.identityId && !admin) throw forbidden('not_entry_author', undefined, 'Only the author, an owner or an admin may change this entry.');
    if (body.correctsEntryId !== undefined && (body.correctsEntryId?.toLowerCase() ?? null) !== e.correctsEntryId) {
      throw invalid('correction_fixed', { field: 'correctsEntryId' }, 'Which entry a correction corrects cannot change.');
    }
    const changed = changedFields(e, body);
    if (changed.length === 0) return { id: e.id };
    if (e.correctsEntryId && changed.includes('spentOn')) {
      throw invalid('correction_fixed', { field: 'spentOn' }, 'A correction stays dated the day it was made.');
    }
    if (changed.includes('minutes') && body.minutes! < 0 && !e.correctsEntryId) {
      throw invalid('negative_minutes', { field: 'minutes' }, 'Only a correction may carry negative minutes.');
    }
    const attribution = changed.some((f) => ATTRIBUTION.includes(f));
    if (attribution) {
      requireSession(p, 'Attribution changes need a browser session.');
      requireAdmin(p, 'Only an owner or admin may change attribution.');
    }
    if (e.billed) throw conflict('entry_billed', undefined, 'A billed entry cannot change.');
    if (e.periodClosed) {
      requireSession(p, 'Entries in a closed period change only from a browser session.');
      if (!admin || changed.some((f) => WORK_FACTS.includes(f))) {
        throw conflict('closed_period_edit', undefined, 'The period is closed: only billable, billing client and category may change, by an owner or admin.');
      }
    }
    const periodId = changed.includes('spentOn') ? await destinationPeriod(ctx, e, body.spentOn!) : e.periodId;
    if (attribution) await checkAttribution(sql, e, body, changed);
    if ((e.correctsEntryId || e.hasCorrections) && changed.some((f) => SHARED_WITH_CHAIN.includes(f))) {
      throw conflict('attribution_diverges', undefined, 'A correction and the entry it corrects keep the same attribution and billable flag.');
    }
    if (changed.includes('minutes')) await checkNet(sql, e, body.minutes!);
    await applyEdit(ctx, e, body, changed, periodId);
    return { id: e.id };
  },
});

async function destinationPeriod(ctx: Ctx, e: LockedEntry, spentOn: string): Promise<string> {
  const me = await staffMember(ctx.sql, e.workspaceId, ctx.principal.identityId);
  const today = localDate(ctx.now(), me?.timezone ?? e.timezone);
  assertWithinHorizon(spentOn, today, 'spentOn');
  const period = await periodForDate(ctx.sql, e.workspaceId, spentOn, today);
  if (!period) throw conflict('before_first_period', { field: 'spentOn' }, 'The date lies before the first period.');
  if (period.closed) throw conflict('destination_period_closed', { periodId: period.id }, 'The period of the new date is closed.');
  return period.id;
}

/**
 * Category must exist in the workspace (404 `unknown_category`); the billing client must be the
 * entry's project's billing client or a collaborating client (400 `billing_client_scope`).
 * (An entry that is a correction or has corrections also keeps the attribution and billable flag
 * it shares with its chain, 409 `attribution_diverges`: otherwise a correction could take
 * minutes off a client, or off billable time, that never carried them.)
 */
async function checkAttribution(sql: Db, e: LockedEntry, body: Body, changed: Field[]): Promise<void> {
  if (changed.includes('categoryId') && body.categoryId) {
    const [cat] = await sql`select 1 from consultant_categories where id = ${body.categoryId} and workspace_id = ${e.workspaceId}`;
    if (!cat) throw notFound('unknown_category', { field: 'categoryId' }, 'No such consultant category.');
  }
  if (changed.includes('billingClientId') && body.billingClientId) {
    const [ok] = await sql`
      select 1 from projects pr where pr.id = ${e.projectId} and ${clientOnProject(sql, 'pr', body.billingClientId)}`;
    if (!ok) throw invalid('billing_client_scope', { field: 'billingClientId' }, "The billing client must be the project's client or a collaborating client.");
  }
}

async function checkNet(sql: Db, e: LockedEntry, minutes: number): Promise<void> {
  if (!e.correctsEntryId && !e.hasCorrections) return;
  const net = await chainNet(sql, e.correctsEntryId ?? e.id);
  if (net - e.minutes + minutes < 0) throw netNegative();
}

async function applyEdit(ctx: Ctx, e: LockedEntry, b: Body, changed: Field[], periodId: string): Promise<void> {
  const has = (f: Field) => changed.includes(f);
  const now = ctx.now();
  await ctx.sql`
    update time_entries set
      spent_on = ${has('spentOn') ? b.spentOn! : e.spentOn}::date,
      period_id = ${periodId},
      started_at = ${has('startedAt') ? (b.startedAt ? normaliseClock(b.startedAt) : null) : e.startedAt}::time,
      minutes = ${has('minutes') ? b.minutes! : e.minutes},
      note = ${has('note') ? (b.note ?? null) : e.note},
      billable = ${has('billable') ? b.billable! : e.billable},
      billing_client_id = ${has('billingClientId') ? (b.billingClientId ?? null) : e.billingClientId},
      category_id = ${has('categoryId') ? (b.categoryId ?? null) : e.categoryId},
      updated_at = ${now}
    where id = ${e.id}`;
  await recordEvent(
    ctx.sql,
    { workspaceId: e.workspaceId, ticketId: e.ticketId, kind: 'time_edited', actorId: ctx.principal.identityId, payload: { entryId: e.id, fields: changed } },
    now,
    { touch: 'at_commit' },
  );
}
