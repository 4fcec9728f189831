import type { Db } from '../../db/connect.ts';

/**
 * Marks the run a job served `failed` with the job's last error, once its retries are exhausted.
 * The payload names the run (allocation) or a timesheet of it (render). A voided or completed
 * run is left as it is.
 */
export async function failRun(sql: Db, payload: unknown, error: string): Promise<void> {
  const p = (payload ?? {}) as { runId?: unknown; timesheetId?: unknown };
  const uuid = (v: unknown) => (typeof v === 'string' && /^[0-9a-f-]{36}$/i.test(v) ? v : null);
  await sql`
    update billing_runs set status = 'failed', error = ${error.slice(0, 2000)}
    where id = coalesce(${uuid(p.runId)}::uuid, (select run_id from timesheets where id = ${uuid(p.timesheetId)}::uuid))
      and status in ('allocating', 'rendering', 'delivering')`;
}
