import type { JobHelpers } from 'graphile-worker';
import { isConnectionError, type Db } from '../db/connect.ts';
import type { Logger } from '../log.ts';

type Refs = Record<'run_id' | 'timesheet_id' | 'document_id' | 'delivery_id' | 'mailbox_id', string | null>;

/** The business objects a payload (or a task's answer) names, recorded with the job's outcome (what the console searches by). */
function refsOf(payload: unknown): Refs {
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

type Outcome = 'succeeded' | 'failed';

/** One attempt as the process knows it, until its final row is written. */
interface Entry {
  jobId: string;
  task: string;
  key: string | null;
  attempt: number;
  maxAttempts: number;
  workerId: string | null;
  workspaceId: string | null;
  refs: Refs;
  payload: string;
  startedAt: number;
  /** The row's id once a running row was written (a task still running at a flush). */
  id: string | null;
  done: { outcome: Outcome; error: string | null; at: number; served: Refs } | null;
}

export interface RecordedAttempt {
  /**
   * Records the attempt's outcome; `served` names the objects the task produced (a render: its
   * document). In a worker the row is written by the next flush (the promise is already settled);
   * write-through (a task run by itself) it is written before the promise settles.
   */
  finish: (outcome: Outcome, error: string | null, served?: unknown) => Promise<void>;
}

export interface JobHistoryOptions {
  /** How long an attempt's row may wait in the process before a flush writes it (ms); 0: write through, awaited. */
  delayMs?: number;
  /** A flush starts at once when this many rows wait. */
  maxBatch?: number;
  /** Rows kept while the database is unreachable; beyond it the oldest are dropped (logged). */
  maxPending?: number;
}

/** The pause before trying again when PostgreSQL could not be reached. */
const RETRY_MS = 1000;

/** What a worker process uses: rows wait at most 50 ms, 500 rows per statement, 20,000 kept through an outage. */
export const workerHistory: Required<JobHistoryOptions> = { delayMs: 50, maxBatch: 500, maxPending: 20_000 };

/**
 * Every attempt leaves a row in `job_history` (graphile-worker deletes finished jobs): task, job,
 * attempt, worker, the workspace its checked payload names (null for the crontab's tasks), the
 * objects it served, outcome, duration and error text. History never decides a job's fate: a
 * failure to record is logged, not thrown.
 *
 * In a worker the rows are buffered in the process and written by one multi-row statement at most
 * `delayMs` after the first of them waits (and at once when `maxBatch` wait, and at `stop()`): an
 * attempt that ends before the flush is one inserted row with its outcome; one still running at a
 * flush is inserted as `running` and completed by a later flush. The same statement deletes the
 * `queued_jobs` rows of jobs that succeeded (graphile-worker deletes the job itself). Flushes run
 * one at a time, so an attempt's running row always has its id before its outcome is written.
 *
 * What a killed worker (kill -9, a crash) loses: the rows still waiting, i.e. attempts that started
 * or ended in the last `delayMs` (and a flush in flight). The jobs are not affected (graphile-worker
 * holds their state); the attempt has no row, or stays `running`, as a killed attempt's row did
 * before; the next attempt's row follows the last one written. While PostgreSQL is unreachable the
 * rows are kept (up to `maxPending`, tried once a second) and written once it answers; a flush whose connection broke
 * during COMMIT may then write its rows twice. A row PostgreSQL refuses (not a connection error) is
 * retried alone, so only that row is lost.
 */
export class JobHistory {
  private readonly pending = new Set<Entry>();
  private timer: NodeJS.Timeout | null = null;
  /** No flush before this time (epoch ms): the pause after PostgreSQL could not be reached. */
  private retryAt = 0;
  private chain: Promise<void> = Promise.resolve();
  private readonly opts: Required<JobHistoryOptions>;

  constructor(
    private readonly sql: Db,
    private readonly log: Logger,
    opts: JobHistoryOptions = {},
  ) {
    this.opts = { ...workerHistory, ...opts };
  }

  /** Starts recording an attempt of the job `helpers` describe, under `workspaceId`. */
  attempt(helpers: JobHelpers, payload: unknown, workspaceId: string | null): RecordedAttempt {
    const job = helpers.job;
    const entry: Entry = {
      jobId: String(job.id),
      task: job.task_identifier,
      key: job.key ?? null,
      attempt: job.attempts,
      maxAttempts: job.max_attempts,
      workerId: job.locked_by ?? null,
      workspaceId,
      refs: refsOf(payload),
      payload: JSON.stringify(payload ?? null),
      startedAt: Date.now(),
      id: null,
      done: null,
    };
    if (this.opts.delayMs > 0) this.add(entry);
    return {
      finish: (outcome, error, served = null) => {
        entry.done = { outcome, error, at: Date.now(), served: refsOf(served) };
        this.add(entry);
        return this.opts.delayMs <= 0 ? this.flush() : Promise.resolve();
      },
    };
  }

  /** Writes every waiting row now (one statement); settles when they are written (or given up). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.chain = this.chain.then(() => this.write());
    return this.chain;
  }

  /** Writes what waits: the worker's last step before its pool closes. */
  stop(): Promise<void> {
    return this.flush();
  }

  private add(entry: Entry) {
    this.pending.add(entry);
    if (this.pending.size > this.opts.maxPending) {
      const oldest = this.pending.values().next().value!;
      this.pending.delete(oldest);
      this.log.warn({ task: oldest.task, jobId: oldest.jobId }, 'job history not recorded: too many rows waiting');
    }
    if (this.opts.delayMs <= 0) return;
    if (this.pending.size >= this.opts.maxBatch && Date.now() >= this.retryAt) void this.flush();
    else this.schedule();
  }

  /** A flush after `delayMs`, or once the pause after a failed one is over. */
  private schedule() {
    if (this.timer || this.opts.delayMs <= 0) return;
    this.timer = setTimeout(() => void this.flush(), Math.max(this.opts.delayMs, this.retryAt - Date.now())).unref();
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = [...this.pending];
    this.pending.clear();
    try {
      await this.statement(batch);
    } catch (err) {
      if (isConnectionError(err)) {
        // keep them for when PostgreSQL answers again (older first, before rows added meanwhile), trying once a second
        this.retryAt = Date.now() + RETRY_MS;
        const later = [...this.pending];
        this.pending.clear();
        for (const e of [...batch, ...later]) this.add(e);
        this.log.warn({ err, rows: this.pending.size }, 'job history not written yet; kept for the next flush');
      } else if (batch.length > 1) {
        // one row PostgreSQL refuses must not lose the others
        for (const e of batch) await this.statement([e]).catch((one: unknown) => this.log.warn({ err: one, task: e.task }, 'job history not recorded'));
      } else this.log.warn({ err, task: batch[0]!.task }, 'job history not recorded');
    }
    if (this.pending.size > 0) this.schedule();
  }

  /**
   * One statement: insert the attempts not written yet (with their outcome if they ended, else
   * `running`), complete the running rows written before, and forget the queued_jobs rows of jobs
   * that succeeded. Times are the database's clock less how long ago the process saw them, so
   * they compare with graphile-worker's own times whatever the worker's clock says.
   */
  private async statement(batch: Entry[]): Promise<void> {
    const now = Date.now();
    const fresh = batch.filter((e) => e.id === null);
    const ended = batch.filter((e) => e.id !== null && e.done);
    const succeeded = batch.filter((e) => e.done?.outcome === 'succeeded').map((e) => e.jobId);
    const ref = (e: Entry, k: keyof Refs) => e.refs[k] ?? e.done?.served[k] ?? null;
    const col = <T>(rows: Entry[], f: (e: Entry) => T) => rows.map(f);
    // the entries written as running now (one may end while the statement runs: its outcome goes in the next flush)
    const running = new Map(fresh.filter((e) => !e.done).map((e) => [`${e.jobId}:${e.attempt}`, e]));
    const written = await this.sql<{ id: string; job: string; attempt: number }[]>`
      with ins as (
        insert into job_history (job_id, task, job_key, attempt, max_attempts, worker_id, workspace_id, run_id, timesheet_id, document_id,
                                 delivery_id, mailbox_id, payload, outcome, error, started_at, finished_at, duration_ms)
        select r.job_id, r.task, r.job_key, r.attempt, r.max_attempts, r.worker_id, r.workspace_id, r.run_id, r.timesheet_id, r.document_id,
               r.delivery_id, r.mailbox_id, r.payload::jsonb, r.outcome, r.error, now() - r.started_ago * interval '1 millisecond',
               now() - r.finished_ago * interval '1 millisecond', r.duration_ms
        from unnest(${col(fresh, (e) => e.jobId)}::bigint[], ${col(fresh, (e) => e.task)}::text[], ${col(fresh, (e) => e.key)}::text[],
                    ${col(fresh, (e) => e.attempt)}::int[], ${col(fresh, (e) => e.maxAttempts)}::int[], ${col(fresh, (e) => e.workerId)}::text[],
                    ${col(fresh, (e) => e.workspaceId)}::uuid[], ${col(fresh, (e) => ref(e, 'run_id'))}::uuid[],
                    ${col(fresh, (e) => ref(e, 'timesheet_id'))}::uuid[], ${col(fresh, (e) => ref(e, 'document_id'))}::uuid[],
                    ${col(fresh, (e) => ref(e, 'delivery_id'))}::uuid[], ${col(fresh, (e) => ref(e, 'mailbox_id'))}::uuid[],
                    ${col(fresh, (e) => e.payload)}::text[], ${col(fresh, (e) => e.done?.outcome ?? 'running')}::text[],
                    ${col(fresh, (e) => e.done?.error ?? null)}::text[], ${col(fresh, (e) => now - e.startedAt)}::int[],
                    ${col(fresh, (e) => (e.done ? now - e.done.at : null))}::int[], ${col(fresh, (e) => (e.done ? e.done.at - e.startedAt : null))}::int[])
             with ordinality as r(job_id, task, job_key, attempt, max_attempts, worker_id, workspace_id, run_id, timesheet_id, document_id,
                                  delivery_id, mailbox_id, payload, outcome, error, started_ago, finished_ago, duration_ms, ord)
        -- in the order they started: a retry's row follows the attempt before it (the follows_id trigger)
        order by r.ord
        returning id, job_id, attempt, outcome),
      upd as (
        update job_history h set outcome = u.outcome, error = u.error, finished_at = now() - u.finished_ago * interval '1 millisecond',
               duration_ms = u.duration_ms, run_id = coalesce(h.run_id, u.run_id), document_id = coalesce(h.document_id, u.document_id),
               delivery_id = coalesce(h.delivery_id, u.delivery_id), timesheet_id = coalesce(h.timesheet_id, u.timesheet_id)
        from unnest(${col(ended, (e) => e.id)}::bigint[], ${col(ended, (e) => e.done!.outcome)}::text[], ${col(ended, (e) => e.done!.error)}::text[],
                    ${col(ended, (e) => now - e.done!.at)}::int[], ${col(ended, (e) => e.done!.at - e.startedAt)}::int[],
                    ${col(ended, (e) => e.done!.served.run_id)}::uuid[], ${col(ended, (e) => e.done!.served.document_id)}::uuid[],
                    ${col(ended, (e) => e.done!.served.delivery_id)}::uuid[], ${col(ended, (e) => e.done!.served.timesheet_id)}::uuid[])
             as u(id, outcome, error, finished_ago, duration_ms, run_id, document_id, delivery_id, timesheet_id)
        where h.id = u.id),
      gone as (delete from queued_jobs where job_id = any(${succeeded}::bigint[]))
      select id::text, job_id::text as job, attempt from ins where outcome = 'running'`;
    // the running rows' ids, for the flush that writes their outcome
    for (const w of written) {
      const e = running.get(`${w.job}:${w.attempt}`);
      if (e) e.id = w.id;
    }
  }
}
