import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Db } from '../db/connect.ts';
import type { Logger } from '../log.ts';

export interface LivenessOptions {
  /** How often this process records its heartbeat and sweeps for dead workers. */
  intervalMs: number;
  /** A worker id with no heartbeat for this long is dead, and its jobs are unlocked. */
  staleMs: number;
}

export const defaultLiveness: LivenessOptions = { intervalMs: 5_000, staleMs: 30_000 };

/** Heartbeat rows of processes gone this long are deleted (their jobs were unlocked long before). */
const FORGET_AFTER = '1 hour';

/**
 * Worker liveness over PostgreSQL (sql/009). graphile-worker locks a job with the id of the
 * worker running it and, in 0.17, frees it only after 4 hours if that worker dies. Each worker
 * process beats every `intervalMs` with the ids its jobs are locked with; each one also sweeps:
 * jobs locked longer than `staleMs` by ids no fresh heartbeat names are unlocked with
 * graphile-worker's own `force_unlock_workers`, and another worker retries them (tasks are
 * idempotent, as they must be for graphile-worker's own retries). A process beats only while a
 * runner of its own runs (src/jobs/worker.ts says when one starts and stops): a process whose
 * runner ended is as dead as a killed one, and the jobs its runner held are freed the same way.
 */
export class WorkerLiveness {
  readonly processId = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  /** The ids of the running runner; null while none runs. */
  private workerIds: ReadonlySet<string> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  /** Since when beats have succeeded without a gap; null while the database is unreachable. */
  private healthySince: number | null = null;

  constructor(
    private sql: Db,
    private log: Logger,
    private opts: LivenessOptions = defaultLiveness,
  ) {}

  /** A runner started: `ids` (filled as graphile-worker names its pool and workers) are what it locks jobs with. */
  runnerStarted(ids: ReadonlySet<string>): void {
    this.workerIds = ids;
    if (this.timer) this.kick(); // a runner started again beats at once, not an interval later
  }

  /** The runner ended: no more beats until another starts, and this process's row goes (once the database answers). */
  runnerStopped(): void {
    this.workerIds = null;
    this.healthySince = null;
    const running = this.running;
    void (async () => {
      await running;
      await this.sql`delete from worker_heartbeats where process_id = ${this.processId}`;
    })().catch(() => {});
  }

  /** Beats once (so a job taken right away is covered), then every interval. */
  async start(): Promise<void> {
    await this.tick();
    this.timer = setInterval(() => this.kick(), this.opts.intervalMs);
    this.timer.unref();
  }

  private kick(): void {
    if (!this.running) this.running = this.tick().finally(() => (this.running = null));
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
    // Our jobs were finished or released by graphile-worker's graceful shutdown; leave no row.
    await this.sql`delete from worker_heartbeats where process_id = ${this.processId}`.catch(() => {});
  }

  private async tick(): Promise<void> {
    if (!this.workerIds) return;
    try {
      await this.beat();
      const now = Date.now();
      this.healthySince ??= now;
      // After an outage every process's heartbeat is stale; sweep only once the others have had
      // a full staleness window to beat again, so no live worker's jobs are taken from it.
      if (now - this.healthySince >= this.opts.staleMs) await this.sweep();
    } catch (err) {
      this.healthySince = null;
      this.log.warn({ err }, 'worker heartbeat failed');
    }
  }

  private async beat(): Promise<void> {
    await this.sql`
      insert into worker_heartbeats (process_id, worker_ids) values (${this.processId}, ${[...(this.workerIds ?? [])]}::text[])
      on conflict (process_id) do update set worker_ids = excluded.worker_ids, beat_at = now()`;
  }

  /** Unlocks the jobs of dead workers; returns their ids. */
  async sweep(): Promise<string[]> {
    const staleSeconds = this.opts.staleMs / 1000;
    const [row] = await this.sql<[{ ids: string[] }]>`
      with fresh as (
        select unnest(worker_ids) as id from worker_heartbeats where beat_at > now() - make_interval(secs => ${staleSeconds}::float8)
      )
      select coalesce(array_agg(distinct j.locked_by), '{}') as ids
      from graphile_worker.jobs j
      where j.locked_by is not null
        and j.locked_at < now() - make_interval(secs => ${staleSeconds}::float8)
        and not exists (select 1 from fresh where fresh.id = j.locked_by)`;
    const dead = row?.ids ?? [];
    if (dead.length) {
      await this.sql`select graphile_worker.force_unlock_workers(${dead}::text[])`;
      this.log.warn({ workerIds: dead }, 'unlocked the jobs of dead workers');
    }
    await this.sql`delete from worker_heartbeats where beat_at < now() - ${FORGET_AFTER}::interval`;
    return dead;
  }
}
