import { z } from 'zod';
import { visibleTicket } from '../access/visible.ts';
import { requireAdmin } from '../auth/guards.ts';
import type { Db } from '../../db/connect.ts';
import type { Ctx } from '../ctx.ts';
import { invalid } from '../errors.ts';
import { periodColumns, type Period } from '../periods/manage.ts';
import { dateSchema, entryScope, staffMember } from './common.ts';
import { daysBetween } from './dates.ts';
import { unknownPerson } from '../resolve/people.ts';
import { defineOp } from '../operation.ts';
import { weekSchema, type TimeEntry, type Week } from './schema.ts';

export type { TimeEntry, Week } from './schema.ts';

/** Runs the reads on one read-only snapshot (pipelined on one connection), so names and periods match the entries. */
function oneSnapshot<T>(ctx: Ctx, fn: (sql: Db) => Promise<T>): Promise<T> {
  if (ctx.inTx) return fn(ctx.sql);
  return ctx.sql.begin('isolation level repeatable read read only', (t) => fn(t as unknown as Db)) as Promise<T>;
}

/** The longest range GET /time answers, both ends included. */
export const MAX_RANGE_DAYS = 366;

export const listTimeInput = z.object({
  from: dateSchema.describe('First day of the range, YYYY-MM-DD, inclusive'),
  to: dateSchema.describe(`Last day of the range, YYYY-MM-DD, inclusive; at most ${MAX_RANGE_DAYS} days including both ends`),
  userId: z.uuid().optional().describe('Whose time to list; default the caller. Someone else needs Owner or Admin'),
  ticketId: z.uuid().optional().describe('Only entries on this ticket (UUID)'),
});
export type ListTimeInput = z.input<typeof listTimeInput>;

interface EntryRow {
  id: string;
  ticket_id: string;
  user_id: string;
  project_id: string;
  billing_client_id: string | null;
  category_id: string | null;
  period_id: string;
  spent_on: string;
  started_at: string | null;
  timezone: string;
  minutes: number;
  note: string | null;
  billable: boolean;
  corrects_entry_id: string | null;
  billed: boolean;
}

interface Names {
  userName: string;
  /** Visible tickets only: [ticketRef, title]. */
  tickets: Record<string, [string, string]>;
  projects: Record<string, string>;
  clients: Record<string, string>;
}

/**
 * GET /time: one user's entries over an inclusive date range, oldest first, with the periods
 * overlapping the range and the user's weekly target and timezone. Entries stay listed when
 * their ticket has since moved out of the caller's sight: they are the author's own work
 * (a token's project allow-list still narrows them to its projects). Such a ticket is not
 * named: `ticketRef` and `title` are null and `ticketHidden` is true (visibility in SQL).
 */
export const listTime = defineOp({
  name: 'time.list',
  action: 'time.list',
  input: listTimeInput,
  output: weekSchema,
  run: async (ctx, q): Promise<Week> => {
    const { sql, principal: p } = ctx;
    const span = daysBetween(q.from, q.to);
    if (span < 0 || span + 1 > MAX_RANGE_DAYS) {
      throw invalid('range_limit', { maxDays: MAX_RANGE_DAYS }, `from..to must be in order and span at most ${MAX_RANGE_DAYS} days.`);
    }
    const userId = q.userId?.toLowerCase() ?? p.identityId;
    if (userId !== p.identityId) requireAdmin(p, "Only an owner or admin may read someone else's time.");
    const member = await staffMember(sql, p.workspaceId, userId);
    if (!member) throw unknownPerson('subject', { field: 'userId' }, 'No such workspace user.');
    const [rows, [names], periods] = await oneSnapshot(ctx, (sql) => {
      const where = sql`${entryScope(sql, p)} and e.user_id = ${userId} and e.spent_on between ${q.from}::date and ${q.to}::date
      ${q.ticketId ? sql`and e.ticket_id = ${q.ticketId}` : sql``}`;
      // Narrow entry rows plus small dictionaries of names, assembled below: 5,000 entries a year
      // would otherwise carry every title and name 5,000 times from the database.
      return Promise.all([
        sql<EntryRow[]>`
      select e.id, e.ticket_id, e.user_id, e.project_id, e.billing_client_id, e.category_id, e.period_id, e.spent_on::text as spent_on,
             e.started_at::text as started_at, e.timezone, e.minutes, e.note, e.billable, e.corrects_entry_id, e.billed
      from time_entries e where ${where}
      order by e.spent_on, e.started_at nulls last, e.created_at, e.id`,
        sql<[Names]>`
      with used as (select distinct e.ticket_id, e.project_id, e.billing_client_id from time_entries e where ${where})
      select (select name from identities where id = ${userId}) as "userName",
             coalesce((select json_object_agg(t.id, json_build_array(coalesce(tp.key, 'INBOX') || '-' || t.number, t.title))
                       from tickets t left join projects tp on tp.id = t.project_id where t.id in (select ticket_id from used) and ${visibleTicket(sql, p, 't')}), '{}') as tickets,
             coalesce((select json_object_agg(pr.id, pr.name) from projects pr where pr.id in (select project_id from used)), '{}') as projects,
             coalesce((select json_object_agg(c.id, c.name) from clients c where c.id in (select billing_client_id from used)), '{}') as clients`,
        sql<Period[]>`
      select ${periodColumns(sql)}
      from periods where workspace_id = ${p.workspaceId} and period_start <= ${q.to}::date and period_end >= ${q.from}::date
      order by period_start`,
      ]);
    });
    // every entry's period holds its date, which lies in the range: the overlapping periods cover them all
    const closure = new Map(periods.map((x) => [x.id, x]));
    const entries = rows.map((r): TimeEntry => {
      const [ticketRef, title] = names.tickets[r.ticket_id] ?? [null, null];
      const period = closure.get(r.period_id)!;
      return {
        id: r.id,
        ticketId: r.ticket_id,
        ticketRef,
        title,
        ticketHidden: ticketRef === null,
        userId: r.user_id,
        userName: names.userName,
        projectId: r.project_id,
        projectName: names.projects[r.project_id]!,
        billingClientId: r.billing_client_id,
        clientName: r.billing_client_id ? names.clients[r.billing_client_id]! : null,
        categoryId: r.category_id,
        periodId: r.period_id,
        spentOn: r.spent_on,
        startedAt: r.started_at,
        timezone: r.timezone,
        minutes: r.minutes,
        note: r.note,
        billable: r.billable,
        correctsEntryId: r.corrects_entry_id,
        billed: r.billed,
        closedAt: period.closedAt,
        closedBy: period.closedBy,
      };
    });
    return { entries, periods: [...periods], expectedWeekMinutes: member.weeklyTargetMinutes, timezone: member.timezone, userId };
  },
});

/** The net minutes of a list of entries: corrections carry negative minutes and count against what they correct. */
export function totalMinutes(entries: readonly Pick<TimeEntry, 'minutes'>[]): number {
  return entries.reduce((sum, e) => sum + e.minutes, 0);
}
