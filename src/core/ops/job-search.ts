import { z } from 'zod';
import type { Ctx } from '../ctx.ts';
import { notFound } from '../errors.ts';
import { defineOp } from '../operation.ts';
import { UUID_PATTERN } from '../validation.ts';
import { inWorkspace, JOBS } from './job-live.ts';

/** One attempt of a job, from job_history. */
export interface Attempt {
  id: string;
  jobId: string | null;
  task: string;
  key: string | null;
  attempt: number;
  outcome: 'running' | 'succeeded' | 'failed';
  error: string | null;
  startedAt: Date;
  durationMs: number | null;
  followsId: string | null;
  runId: string | null;
  documentId: string | null;
  deliveryId: string | null;
  payload: unknown;
}

/** A job still in the queue. */
export interface LiveJob {
  id: string;
  task: string;
  queue: string | null;
  key: string | null;
  attempts: number;
  maxAttempts: number;
  runAt: Date;
  lockedBy: string | null;
  lastError: string | null;
  payload: unknown;
}

const historyVisible = (ctx: Ctx) => ctx.sql`(h.workspace_id = ${ctx.principal.workspaceId}::uuid or h.workspace_id is null)`;
const ATTEMPT = (ctx: Ctx) => ctx.sql`
  h.id::text, h.job_id::text as "jobId", h.task, h.job_key as key, h.attempt, h.outcome, h.error, h.started_at as "startedAt",
  h.duration_ms as "durationMs", h.follows_id::text as "followsId", h.run_id as "runId", h.document_id as "documentId",
  h.delivery_id as "deliveryId", h.payload`;
const LIVE = (ctx: Ctx) => ctx.sql`
  j.id::text, j.task_identifier as task, j.queue_name as queue, j.key, j.attempts, j.max_attempts as "maxAttempts", j.run_at as "runAt",
  j.locked_by as "lockedBy", j.last_error as "lastError", qj.payload`;

export const searchInput = z.object({
  q: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .describe('A task, queue, job key, text of the payload, or the id of a client, billing run, document, delivery or mailbox.'),
});

/**
 * Finds jobs by what they were for: queued jobs and past attempts whose task, queue or key is
 * `q`, whose payload contains it, or (an id) that served that object: a billing run, timesheet,
 * document, delivery, mailbox, or a client through its documents.
 */
export const searchJobs = defineOp({
  name: 'ops.jobs.search',
  action: 'ops.read',
  input: searchInput,
  output: null,
  run: async (ctx, { q }): Promise<{ live: LiveJob[]; history: Attempt[] }> => {
    const { sql, principal: p } = ctx;
    const id = UUID_PATTERN.test(q) ? q.toLowerCase() : null;
    const like = `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    // each way of matching on its own (the key, task and queue by graphile-worker's unique indexes,
    // the payload by sql/094's trigram index): one OR over them read every queued job's payload
    const live = await sql<LiveJob[]>`
    select ${LIVE(ctx)} from ${JOBS(sql)}
    where ${inWorkspace(sql, p.workspaceId)}
      and j.id in (select m.id from graphile_worker.jobs m where m.key = ${q}
                   union select m.id from graphile_worker.jobs m where m.task_identifier = ${q}
                   union select m.id from graphile_worker.jobs m where m.queue_name = ${q}
                   union select m.job_id from queued_jobs m where m.payload::text ilike ${like})
    order by j.id desc limit 100`;
    const byObject = id
      ? sql`or h.run_id = ${id}::uuid or h.timesheet_id = ${id}::uuid or h.document_id = ${id}::uuid or h.delivery_id = ${id}::uuid
          or h.document_id = any(array(select d.id from documents d where d.client_id = ${id}::uuid and d.workspace_id = ${p.workspaceId}))
          or h.mailbox_id = ${id}::uuid`
      : sql``;
    // the matches first (each condition by its index: a subquery inside the OR, unlike an array,
    // turned it into a scan of every attempt), then the newest 100 of them: with the limit
    // beside the match, PostgreSQL's generic plan for this prepared statement (from the sixth call
    // on) walked every attempt newest first looking for 100 matches (~200 ms at 100,000 attempts)
    const history = await sql<Attempt[]>`
    with m as materialized (
      select h.id from job_history h
      where ${historyVisible(ctx)} and (h.task = ${q} or h.job_key = ${q} or h.payload::text ilike ${like} ${byObject}))
    select ${ATTEMPT(ctx)} from job_history h where h.id = any(array(select m.id from m))
    order by h.id desc limit 100`;
    return { live: [...live], history: [...history] };
  },
});

const jobInput = z.object({
  jobId: z
    .string()
    .regex(/^\d{1,18}$/)
    .describe('The job (graphile-worker id).'),
});

/** One job: the queued job while it exists, and every attempt it made (what each produced). */
export const jobDetail = defineOp({
  name: 'ops.jobs.detail',
  action: 'ops.read',
  input: jobInput,
  output: null,
  run: async (ctx, { jobId }): Promise<{ job: LiveJob | null; attempts: Attempt[] }> => {
    const { sql, principal: p } = ctx;
    const [job] = await sql<LiveJob[]>`select ${LIVE(ctx)} from ${JOBS(sql)} where j.id = ${jobId}::bigint and ${inWorkspace(sql, p.workspaceId)}`;
    const attempts = await sql<Attempt[]>`
    select ${ATTEMPT(ctx)} from job_history h where h.job_id = ${jobId}::bigint and ${historyVisible(ctx)} order by h.id`;
    if (!job && attempts.length === 0) throw notFound('unknown_job', undefined, 'No such job.');
    return { job: job ?? null, attempts: [...attempts] };
  },
});
