import type { Db } from '../../db/connect.ts';
import type { JobDecl, PayloadIn, WorkspacePayload } from './define.ts';

export interface EnqueueOptions {
  /**
   * Queue afresh instead of keeping a live job with the same key (graphile-worker's `replace`): a
   * waiting job is reset, and one running or out of attempts loses the key to a new job. For a
   * deliberate new start (a resend).
   */
  fresh?: boolean;
  runAt?: Date;
}

/**
 * Adds a declared job in SQL, inside the caller's transaction: a change that rolls back leaves no
 * job behind, and the core never imports the runner. The payload is checked by the job's schema;
 * key, queue and attempts come from its declaration (src/core/jobs/catalog.ts). A keyed job is
 * deduplicated (`unsafe_dedupe`): an existing job with the key, even a running one, is kept as it
 * is, which is what idempotent tasks keyed by the object they serve want. The payload goes as text
 * cast to json: a parameter typed json would be encoded once more by postgres.js and arrive as a
 * JSON string. The same statement records the job in `queued_jobs` (its workspace and payload),
 * which is what the console reads beside graphile-worker's public `jobs` view.
 */
export async function enqueue<S extends WorkspacePayload>(sql: Db, job: JobDecl<S>, input: PayloadIn<JobDecl<S>>, opts: EnqueueOptions = {}): Promise<void> {
  const payload = job.payload.parse(input);
  const key = job.key(payload);
  const json = JSON.stringify(payload);
  await sql`
    with job as (
      select (graphile_worker.add_job(${job.task}::text, ${json}::text::json,
        queue_name => ${job.queue?.(payload) ?? null}::text, run_at => ${opts.runAt ?? null}::timestamptz,
        max_attempts => ${job.maxAttempts}::int, job_key => ${key}::text,
        job_key_mode => ${opts.fresh ? 'replace' : 'unsafe_dedupe'}::text)).id)
    insert into queued_jobs (job_id, workspace_id, task, payload)
    select job.id, ${payload.workspaceId}::uuid, ${job.task}, ${json}::text::jsonb from job
    on conflict (job_id) do update set workspace_id = excluded.workspace_id, payload = excluded.payload`;
}
