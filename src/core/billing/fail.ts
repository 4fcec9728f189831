import type { Db } from '../../db/connect.ts';

/**
 * Marks the run a job served `failed` with the job's last error, once its retries are exhausted.
 * The payload names the run (allocation) or a timesheet of it (render). A voided or completed
 * run is left as it is.
 */
export async function failRun(sql: Db, served: { runId: string } | { timesheetId: string }, error: string): Promise<void> {
  const runId = 'runId' in served ? served.runId : null;
  const timesheetId = 'timesheetId' in served ? served.timesheetId : null;
  await sql`
    update billing_runs set status = 'failed', error = ${error.slice(0, 2000)}
    where id = coalesce(${runId}::uuid, (select run_id from timesheets where id = ${timesheetId}::uuid))
      and status in ('allocating', 'rendering', 'delivering')`;
}
