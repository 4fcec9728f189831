import type { Db } from '../../db/connect.ts';
import type { JobDecl, PayloadIn, WorkspacePayload } from './define.ts';
import { HELD_RUN_AT, pausedFor } from './paused.ts';

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
 * which is what the console reads beside graphile-worker's public `jobs` view. A job of a task its
 * workspace paused is added held, its due time kept for the resume (./paused.ts).
 */
export async function enqueue<S extends WorkspacePayload>(sql: Db, job: JobDecl<S>, input: PayloadIn<JobDecl<S>>, opts: EnqueueOptions = {}): Promise<void> {
  const payload = job.payload.parse(input);
  const key = job.key(payload);
  const json = JSON.stringify(payload);
  const runAt = opts.runAt ?? null;
  await sql`
    with paused as (select ${pausedFor(sql, payload.workspaceId, job.task)} as held),
    job as (
      select (graphile_worker.add_job(${job.task}::text, ${json}::text::json,
        queue_name => ${job.queue?.(payload) ?? null}::text,
        run_at => case when paused.held then ${HELD_RUN_AT}::timestamptz else ${runAt}::timestamptz end,
        max_attempts => ${job.maxAttempts}::int, job_key => ${key}::text,
        job_key_mode => ${opts.fresh ? 'replace' : 'unsafe_dedupe'}::text)).id, paused.held from paused)
    insert into queued_jobs (job_id, workspace_id, task, payload, held_run_at)
    select job.id, ${payload.workspaceId}::uuid, ${job.task}, ${json}::text::jsonb,
           case when job.held then coalesce(${runAt}::timestamptz, now()) end from job
    on conflict (job_id) do update set workspace_id = excluded.workspace_id, payload = excluded.payload,
      held_run_at = coalesce(queued_jobs.held_run_at, excluded.held_run_at)`;
}
