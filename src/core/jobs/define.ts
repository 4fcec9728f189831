import type { z } from 'zod';
import type { Db } from '../../db/connect.ts';
import type { JobCtx } from './ctx.ts';

/** Every job the core queues works for one workspace, named in its payload (the console and job_history read it there). */
export type WorkspacePayload = z.ZodType<{ workspaceId: string }, { workspaceId: string }>;

/**
 * One job: its task name (graphile-worker's identifier), the schema of its payload (checked when
 * it is queued and once more when a worker takes it), its attempts, and how its job key and queue
 * follow from the payload. `onLastAttemptFailed` is the core's rule for an attempt that threw and
 * will not be retried (a failed run, a settled delivery); the worker calls it.
 */
export interface JobDecl<S extends WorkspacePayload = WorkspacePayload> {
  readonly kind: 'job';
  readonly task: string;
  readonly payload: S;
  readonly maxAttempts: number;
  /** One live job per key (enqueue dedupes on it): every job here serves one object, named by its key. */
  readonly key: (p: z.output<S>) => string;
  /** Jobs of one queue run one at a time, in order. */
  readonly queue?: (p: z.output<S>) => string;
  readonly onLastAttemptFailed?: (ctx: JobCtx, p: z.output<S>, error: string) => Promise<void>;
  /**
   * The same rule when an operator cancels the job before it ran (src/core/ops/job-controls.ts), in
   * the cancel's transaction: what the job served must not wait for ever (a run left `allocating`).
   */
  readonly onCancelled?: (sql: Db, p: z.output<S>, why: string, now: Date) => Promise<void>;
}

export const defineJob = <S extends WorkspacePayload>(d: Omit<JobDecl<S>, 'kind'>): JobDecl<S> => ({ kind: 'job', ...d });

/** A task on the process's crontab: no payload, no workspace (it works for the whole process). */
export interface CronDecl {
  readonly kind: 'cron';
  readonly task: string;
  /** The crontab's time fields (graphile-worker's format: minute hour day month weekday). */
  readonly schedule: string;
}

export const defineCron = (d: Omit<CronDecl, 'kind'>): CronDecl => ({ kind: 'cron', ...d });

/** The payload a job is queued with (the schema's input) and the one its handler receives (its output). */
export type PayloadIn<J> = J extends JobDecl<infer S> ? z.input<S> : never;
export type PayloadOf<J> = J extends JobDecl<infer S> ? z.output<S> : never;
