import type { Db } from '../../db/connect.ts';

export interface EnqueueOptions {
  /** One live job per key: a second enqueue with the same key while the first waits or runs adds nothing. */
  jobKey?: string;
  /** Jobs of one queue run one at a time, in order. */
  queueName?: string;
  maxAttempts?: number;
  runAt?: Date;
}

/**
 * Adds a graphile-worker job in SQL, inside the caller's transaction: a change that rolls back
 * leaves no job behind, and the core never imports the runner. A keyed job is deduplicated
 * (`unsafe_dedupe`): an existing job with the key, even a running one, is kept as it is, which is
 * what idempotent tasks keyed by the object they serve want. The payload goes as text cast to json:
 * a parameter typed json would be encoded once more by postgres.js and arrive as a JSON string.
 */
export async function enqueue(sql: Db, task: string, payload: Record<string, unknown>, opts: EnqueueOptions = {}): Promise<void> {
  await sql`
    select graphile_worker.add_job(${task}::text, ${JSON.stringify(payload)}::text::json,
      queue_name => ${opts.queueName ?? null}::text, run_at => ${opts.runAt ?? null}::timestamptz,
      max_attempts => ${opts.maxAttempts ?? null}::int, job_key => ${opts.jobKey ?? null}::text,
      job_key_mode => ${opts.jobKey ? 'unsafe_dedupe' : 'replace'}::text)`;
}
