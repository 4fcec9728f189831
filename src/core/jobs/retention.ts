import type { Db } from '../../db/connect.ts';

/**
 * Deletes job_history rows that started more than `days` days ago, `batch` rows per statement
 * (each its own short transaction, oldest first by the started_at index), so the cleanup never
 * holds a long lock on the table the worker writes every attempt to. Answers how many it deleted.
 */
export async function deleteOldJobHistory(sql: Db, days: number, batch = 5000): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await sql`
      delete from job_history where id in (
        select id from job_history where started_at < now() - make_interval(days => ${days}) order by started_at limit ${batch})`;
    total += deleted.count;
    if (deleted.count < batch) break;
  }
  // the console's hourly counters (sql/094) cover 7 days; older hours are never read
  await sql`delete from job_stats_hourly where hour < now() - interval '8 days'`;
  return total;
}

/** Forgets the queued_jobs rows of jobs graphile-worker no longer holds (finished, cancelled, or left by a crash). */
export async function deleteFinishedQueuedJobs(sql: Db): Promise<number> {
  const gone = await sql`delete from queued_jobs q where not exists (select 1 from graphile_worker.jobs j where j.id = q.job_id)`;
  return gone.count;
}
