import type { JobHelpers } from 'graphile-worker';
import type { Db } from '../db/connect.ts';
import type { Logger } from '../log.ts';

/** The business objects a payload (or a task's answer) names, recorded with the job's outcome (what the console searches by). */
function refsOf(payload: unknown): Record<'run_id' | 'timesheet_id' | 'document_id' | 'delivery_id' | 'mailbox_id', string | null> {
  const p = (payload && typeof payload === 'object' ? payload : {}) as Record<string, unknown>;
  const uuid = (v: unknown) => (typeof v === 'string' && /^[0-9a-f-]{36}$/i.test(v) ? v : null);
  return {
    run_id: uuid(p.runId),
    timesheet_id: uuid(p.timesheetId),
    document_id: uuid(p.documentId),
    delivery_id: uuid(p.deliveryId),
    mailbox_id: uuid(p.mailboxId),
  };
}

export interface RecordedAttempt {
  /** Completes the attempt's row; `served` names the objects the task produced (a render: its document). */
  finish: (outcome: 'succeeded' | 'failed', error: string | null, served?: unknown) => Promise<void>;
}

/**
 * Every attempt leaves a row in `job_history` (graphile-worker deletes finished jobs): written
 * when the attempt starts, under the workspace its checked payload names (null for the crontab's
 * tasks), completed with its outcome, duration and error text when it ends. History never
 * decides a job's fate: a failure to record is logged, not thrown.
 */
export async function recordAttempt(
  { sql, log }: { sql: Db; log: Logger },
  helpers: JobHelpers,
  payload: unknown,
  workspaceId: string | null,
): Promise<RecordedAttempt> {
  const onError = (err: unknown) => log.warn({ err }, 'job history not recorded');
  const job = helpers.job;
  const refs = refsOf(payload);
  const started = Date.now();
  const [row] = await sql<{ id: string }[]>`
    insert into job_history (job_id, task, job_key, attempt, max_attempts, worker_id, workspace_id, run_id, timesheet_id, document_id, delivery_id, mailbox_id, payload)
    values (${job.id}, ${job.task_identifier}, ${job.key}, ${job.attempts}, ${job.max_attempts}, ${job.locked_by}, ${workspaceId}::uuid,
            ${refs.run_id}, ${refs.timesheet_id}, ${refs.document_id}, ${refs.delivery_id}, ${refs.mailbox_id},
            ${sql.json((payload ?? null) as never)})
    returning id`.catch((err: unknown) => (onError(err), [] as { id: string }[]));
  return {
    finish: (outcome, error, served = null) => {
      if (!row) return Promise.resolve();
      const more = refsOf(served);
      // graphile-worker deletes a job that succeeded once the task returns: its queued_jobs row goes in
      // the same statement (a crash in between leaves one for history:cleanup)
      return sql`
        with done as (delete from queued_jobs where ${outcome === 'succeeded'} and job_id = ${job.id}::bigint)
        update job_history set outcome = ${outcome}, error = ${error}, finished_at = now(), duration_ms = ${Date.now() - started},
               run_id = coalesce(run_id, ${more.run_id}::uuid), document_id = coalesce(document_id, ${more.document_id}::uuid),
               delivery_id = coalesce(delivery_id, ${more.delivery_id}::uuid), timesheet_id = coalesce(timesheet_id, ${more.timesheet_id}::uuid)
        where id = ${row.id}`.then(() => undefined, onError);
    },
  };
}
