import type { Db } from '../../db/connect.ts';

/**
 * Pausing a task (issue 26) holds the pausing workspace's jobs of it: each is rescheduled (through
 * graphile-worker's public `reschedule_jobs`) to run at this moment, which never comes, and the
 * time it was due is kept in `queued_jobs.held_run_at` for the resume. A job queued while its task
 * is paused is added held. Why not graphile-worker's `forbiddenFlags`: in 0.17 the local queue the
 * worker runs with fetches jobs without the flags, so a paused job would still be locked (and an
 * attempt spent), while holding by run_at needs nothing of the worker and costs nothing per fetch.
 */
export const HELD_RUN_AT = '9999-01-01 00:00:00+00';

/** Whether the workspace paused the task: an SQL condition, for the statement that queues a job. */
export const pausedFor = (sql: Db, workspaceId: string, task: string) =>
  sql`exists (select 1 from paused_tasks p where p.workspace_id = ${workspaceId}::uuid and p.task = ${task})`;
