import { z } from 'zod';
import type { Db } from '../../db/connect.ts';
import type { Ctx } from '../ctx.ts';
import { defineOp } from '../operation.ts';

/**
 * The console's view of the queue, scoped to the caller's workspace: graphile-worker's public
 * `jobs` view beside the project's own `queued_jobs` (the workspace and payload each job was
 * queued with, sql/076). A job with no workspace there (a cleanup, the mailbox scheduler, queued
 * by the crontab) is the process's, shown to every operator. A job is in exactly one state:
 * running (locked), failed (not running, has an error: waiting for its retry or given up),
 * scheduled (no error, not due) or waiting (no error, due).
 */
export const JOBS = (sql: Db) => sql`graphile_worker.jobs j left join queued_jobs qj on qj.job_id = j.id`;

/** The jobs the caller's workspace may see (and act on): its own and the process's (no workspace). */
export const inWorkspace = (sql: Db, workspaceId: string) => sql`(qj.workspace_id is null or qj.workspace_id = ${workspaceId}::uuid)`;

export interface QueueCount {
  task: string;
  queue: string | null;
  waiting: number;
  scheduled: number;
  running: number;
  failed: number;
  oldestWaiting: Date | null;
}

export interface RunningJob {
  id: string;
  task: string;
  key: string | null;
  lockedBy: string | null;
  lockedAt: Date;
  attempts: number;
  /** Whether a fresh worker heartbeat names the lock's holder (worker_heartbeats): false means a dead worker. */
  workerAlive: boolean;
}

export interface QueuedJob {
  id: string;
  task: string;
  queue: string | null;
  key: string | null;
  state: 'waiting' | 'scheduled';
  runAt: Date;
  /** Its task is paused for the workspace: held, no worker takes it until the resume. */
  paused: boolean;
}

export interface WorkerRow {
  /** The worker process (its heartbeat), or null for a lock holder no heartbeat names (a dead worker). */
  process: string | null;
  workerIds: string[];
  startedAt: Date | null;
  beatAt: Date | null;
  alive: boolean;
  /** The caller's jobs (and the process's) it holds now. */
  running: number;
}

/** Everything /ops/jobs shows of the jobs graphile-worker holds now, except the failed ones (core/ops/jobs.ts `failedJobs`). */
export interface LiveQueue {
  /** Waiting, scheduled, running and failed counts per task and queue, with the oldest waiting job's due time. */
  counts: QueueCount[];
  /** Jobs a worker holds, oldest lock first (200 at most), with whether that worker is still beating. */
  running: RunningJob[];
  /** The first 50 waiting jobs in the order a worker takes them, then the next 50 scheduled. */
  queued: QueuedJob[];
  /**
   * Each worker process's heartbeat (src/jobs/liveness.ts) with the jobs it holds now, and the
   * lock holders no heartbeat names (graphile-worker's `locked_by`), whose jobs wait for the sweep
   * or a force-unlock.
   */
  workers: WorkerRow[];
}

const at = (s: string | null): Date | null => (s === null ? null : new Date(s));

/**
 * One statement reads the jobs the workspace sees once (graphile-worker's view holds every
 * workspace's jobs and no index of ours can narrow it: the view's tables are the library's) and
 * answers the counts, the running, waiting and scheduled lists and the workers from that one set
 * (issue 25: before, five statements read the whole view each). The set is `inWorkspace` written
 * as "no queued_jobs row names another workspace" (an anti-join: half the time of the left join
 * that reads every row's workspace). JSON carries the four answers in one row; its times come
 * back as text and are made Dates again here.
 */
export async function liveQueue({ sql, principal: p }: Ctx): Promise<LiveQueue> {
  const [row] = await sql<{ counts: QueueCount[]; running: RunningJob[]; queued: QueuedJob[]; workers: WorkerRow[] }[]>`
    with v as materialized (
      select j.id, j.task_identifier as task, j.queue_name as queue, j.key, j.priority, j.run_at, j.attempts,
             j.locked_at, j.locked_by, j.last_error is not null as failed
      from graphile_worker.jobs j
      where not exists (select 1 from queued_jobs qj where qj.job_id = j.id and qj.workspace_id <> ${p.workspaceId}::uuid)),
    held as (select v.locked_by, count(*)::int as n from v where v.locked_by is not null group by 1),
    due as (
      (select v.*, 'waiting' as state from v where v.locked_at is null and not v.failed and v.run_at <= now() order by v.priority, v.run_at, v.id limit 50)
      union all
      (select v.*, 'scheduled' from v where v.locked_at is null and not v.failed and v.run_at > now() order by v.run_at, v.id limit 50)),
    workers as (
      select b.process_id as process, b.worker_ids as ids, b.started_at, b.beat_at, b.beat_at > now() - interval '1 minute' as alive,
             coalesce((select sum(h.n) from held h where h.locked_by = any(b.worker_ids)), 0)::int as running
      from worker_heartbeats b
      union all
      select null, array[h.locked_by], null, null, false, h.n from held h
      where not exists (select 1 from worker_heartbeats b where h.locked_by = any(b.worker_ids)))
    select
      (select coalesce(json_agg(json_build_object('task', c.task, 'queue', c.queue, 'waiting', c.waiting, 'scheduled', c.scheduled,
                                                  'running', c.running, 'failed', c.failed, 'oldestWaiting', c.oldest)
                                order by c.task, c.queue nulls first), '[]')
       from (select v.task, v.queue,
                    count(*) filter (where v.locked_at is null and not v.failed and v.run_at <= now())::int as waiting,
                    count(*) filter (where v.locked_at is null and not v.failed and v.run_at > now())::int as scheduled,
                    count(*) filter (where v.locked_at is not null)::int as running,
                    count(*) filter (where v.locked_at is null and v.failed)::int as failed,
                    min(v.run_at) filter (where v.locked_at is null and not v.failed and v.run_at <= now()) as oldest
             from v group by v.task, v.queue) c) as counts,
      (select coalesce(json_agg(json_build_object('id', r.id::text, 'task', r.task, 'key', r.key, 'lockedBy', r.locked_by, 'lockedAt', r.locked_at,
                                                  'attempts', r.attempts, 'workerAlive', r.alive) order by r.locked_at, r.id), '[]')
       from (select v.*, exists (select 1 from worker_heartbeats b where v.locked_by = any(b.worker_ids) and b.beat_at > now() - interval '1 minute') as alive
             from v where v.locked_at is not null order by v.locked_at, v.id limit 200) r) as running,
      (select coalesce(json_agg(json_build_object('id', d.id::text, 'task', d.task, 'queue', d.queue, 'key', d.key, 'state', d.state, 'runAt', d.run_at,
                                                  'paused', exists (select 1 from queued_jobs qj join paused_tasks t on t.workspace_id = qj.workspace_id
                                                                    where qj.job_id = d.id and t.task = d.task))
                                order by d.state desc, case when d.state = 'waiting' then d.priority end, d.run_at, d.id), '[]')
       from due d) as queued,
      (select coalesce(json_agg(json_build_object('process', w.process, 'workerIds', w.ids, 'startedAt', w.started_at, 'beatAt', w.beat_at,
                                                  'alive', w.alive, 'running', w.running) order by w.process nulls last, w.ids), '[]')
       from workers w) as workers`;
  const { counts, running, queued, workers } = row!;
  return {
    counts: counts.map((c) => ({ ...c, oldestWaiting: at(c.oldestWaiting as unknown as string | null) })),
    running: running.map((r) => ({ ...r, lockedAt: at(r.lockedAt as unknown as string)! })),
    queued: queued.map((q) => ({ ...q, runAt: at(q.runAt as unknown as string)! })),
    workers: workers.map((w) => ({ ...w, startedAt: at(w.startedAt as unknown as string | null), beatAt: at(w.beatAt as unknown as string | null) })),
  };
}

/** What /ops/jobs shows of the live queue, read at once (`liveQueue`). */
export const jobQueueNow = defineOp({
  name: 'ops.jobs.live',
  action: 'ops.read',
  input: z.object({}),
  output: null,
  run: liveQueue,
});
