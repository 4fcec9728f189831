import type { Db } from '../../db/connect.ts';
import { addDays, monthEnd, monthStart } from '../time/dates.ts';

export interface PeriodRef {
  id: string;
  periodStart: string;
  periodEnd: string;
  closed: boolean;
}

/** Serialises everything that creates periods in one workspace (held to the end of the transaction). */
export async function lockPeriodCreation(sql: Db, workspaceId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${'wt:periods:' + workspaceId}::text, 0))`;
}

/** The first and last day covered by the workspace's periods, or null when there are none. */
export async function periodBounds(sql: Db, workspaceId: string): Promise<{ first: string; last: string } | null> {
  const [row] = await sql<{ first: string | null; last: string | null }[]>`
    select min(period_start)::text as first, max(period_end)::text as last from periods where workspace_id = ${workspaceId}`;
  return row?.first && row.last ? { first: row.first, last: row.last } : null;
}

/** Inserts contiguous calendar-month periods from `start` until one covers `through`. */
export async function createMonthsThrough(sql: Db, workspaceId: string, start: string, through: string): Promise<void> {
  if (start > through) return;
  const starts: string[] = [];
  const ends: string[] = [];
  // stops at the month holding `through` without computing the day after it (none after 9999-12-31)
  for (let s = start; ; s = addDays(ends.at(-1)!, 1)) {
    starts.push(s);
    ends.push(monthEnd(s));
    if (ends.at(-1)! >= through) break;
  }
  await sql`
    insert into periods (workspace_id, period_start, period_end)
    select ${workspaceId}, s, e from unnest(${starts}::date[], ${ends}::date[]) as x(s, e)`;
}

/** The existing period holding `date`, locked `for share` (a concurrent close waits), or null. */
export async function findPeriod(sql: Db, workspaceId: string, date: string): Promise<PeriodRef | null> {
  const [row] = await sql<PeriodRef[]>`
    select id, period_start::text as "periodStart", period_end::text as "periodEnd", closed_at is not null as closed
    from periods where workspace_id = ${workspaceId} and period_start <= ${date}::date and period_end >= ${date}::date
    for share`;
  return row ?? null;
}

/**
 * The period holding `date`, locked `for share` so a concurrent close waits for this
 * transaction. Periods are opened on first need: with none at all, the first is the month
 * of `today` (the caller's local date); a date after the last period extends the calendar
 * month by month. Returns null when `date` lies before the first period.
 * Must run inside a transaction.
 */
export async function periodForDate(sql: Db, workspaceId: string, date: string, today: string): Promise<PeriodRef | null> {
  const hit = await findPeriod(sql, workspaceId, date);
  if (hit) return hit;
  await lockPeriodCreation(sql, workspaceId);
  const bounds = await periodBounds(sql, workspaceId);
  if (!bounds) {
    const first = monthStart(today);
    if (date < first) return null;
    await createMonthsThrough(sql, workspaceId, first, date);
  } else if (date < bounds.first) {
    return null;
  } else if (date > bounds.last) {
    await createMonthsThrough(sql, workspaceId, addDays(bounds.last, 1), date);
  }
  return findPeriod(sql, workspaceId, date);
}
