import type { Db } from '../../db/connect.ts';

export interface EnqueueOptions {
  /** One live job per key: a second enqueue with the same key while the first waits or runs adds nothing. */
  jobKey?: string;
  /**
   * With a key: queue afresh instead (graphile-worker's `replace`): a waiting job is reset, and one
   * running or out of attempts loses the key to a new job. For a deliberate new start (a resend).
   */
  replaceKeyed?: boolean;
  /** Jobs of one queue run one at a time, in order. */
  queueName?: string;
  maxAttempts?: number;
  runAt?: Date;
}

/** Every job the core queues works for one workspace, named in its payload. */
export type JobPayload = { workspaceId: string } & Record<string, unknown>;

/**
 * Adds a graphile-worker job in SQL, inside the caller's transaction: a change that rolls back
 * leaves no job behind, and the core never imports the runner. A keyed job is deduplicated
 * (`unsafe_dedupe`): an existing job with the key, even a running one, is kept as it is, which is
 * what idempotent tasks keyed by the object they serve want. The payload goes as text cast to json:
 * a parameter typed json would be encoded once more by postgres.js and arrive as a JSON string.
 * The same statement records the job in `queued_jobs` (its workspace and payload), which is what
 * the console reads beside graphile-worker's public `jobs` view.
 */
export async function enqueue(sql: Db, task: string, payload: JobPayload, opts: EnqueueOptions = {}): Promise<void> {
  const json = JSON.stringify(payload);
  await sql`
    with job as (
      select (graphile_worker.add_job(${task}::text, ${json}::text::json,
        queue_name => ${opts.queueName ?? null}::text, run_at => ${opts.runAt ?? null}::timestamptz,
        max_attempts => ${opts.maxAttempts ?? null}::int, job_key => ${opts.jobKey ?? null}::text,
        job_key_mode => ${opts.jobKey && !opts.replaceKeyed ? 'unsafe_dedupe' : 'replace'}::text)).id)
    insert into queued_jobs (job_id, workspace_id, task, payload)
    select job.id, ${payload.workspaceId}::uuid, ${task}, ${json}::text::jsonb from job
    on conflict (job_id) do update set workspace_id = excluded.workspace_id, payload = excluded.payload`;
}
