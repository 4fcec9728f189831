import type { Db } from '../../db/connect.ts';

/**
 * Moves a run along its lifecycle from what exists: `rendering` until every document of its
 * first-version timesheets is written, then `awaiting_approval` while a timesheet held for review
 * waits for the run's approval (issue 23), then `delivering` while any delivery is pending, then
 * `completed`; a voided or failed run does not move. Under a lock on the run row, so two jobs
 * finishing together agree (`no key update`: writing a document already holds a key-share lock on
 * its run through the foreign key, and `for update` would deadlock two renders).
 */
export async function advanceRun(sql: Db, runId: string, now: Date): Promise<void> {
  // Lock first, count after: in READ COMMITTED a statement sees what was committed when it began,
  // so counts taken in the locking statement itself would miss the change of the transaction the
  // lock waited for, and two deliveries finishing together would each see the other still pending.
  const [locked] = await sql<{ status: string; approved: boolean }[]>`
    select status, approved_at is not null as approved from billing_runs where id = ${runId} for no key update`;
  if (!locked || !['rendering', 'awaiting_approval', 'delivering'].includes(locked.status)) return;
  const [run] = await sql<{ missing: number; held: boolean; pending: number }[]>`
    select (select coalesce(sum(cardinality(s.formats)), 0) from timesheets s where s.run_id = ${runId} and s.version = 1)::int
           - (select count(*) from documents d join timesheets s on s.id = d.timesheet_id where s.run_id = ${runId} and s.version = 1)::int as missing,
           (select count(*) from document_deliveries dd join timesheets s on s.id = dd.timesheet_id
            where s.run_id = ${runId} and dd.state = 'pending' and dd.kind = 'timesheet')::int as pending,
           exists (select 1 from timesheets s where s.run_id = ${runId} and s.version = 1 and s.review) as held`;
  const next = run!.missing > 0 ? 'rendering' : run!.held && !locked.approved ? 'awaiting_approval' : run!.pending > 0 ? 'delivering' : 'completed';
  if (next === locked.status) return;
  await sql`
    update billing_runs set status = ${next}, completed_at = ${next === 'completed' ? now : null}::timestamptz
    where id = ${runId}`;
}
