import { z } from 'zod';
import { plannedPerCall } from '../../db/connect.ts';
import type { Ctx } from '../ctx.ts';
import type { Fragment } from '../tickets/summary.ts';
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
    // each way of matching on its own, the newest 100 visible jobs of each (the key by graphile-worker's
    // unique index, the payload by sql/094's trigram index), then the newest 100 of those: one OR
    // over them read every queued job's payload, and matching every job of a busy task before
    // keeping 100 looked each of them up in queued_jobs (22 ms at 10,000 queued jobs)
    const matching = (cond: Fragment) => sql`(select j.id from ${JOBS(sql)} where ${inWorkspace(sql, p.workspaceId)} and ${cond} order by j.id desc limit 100)`;
    const byObject = id
      ? sql`or h.run_id = ${id}::uuid or h.timesheet_id = ${id}::uuid or h.document_id = ${id}::uuid or h.delivery_id = ${id}::uuid
          or h.document_id = any(array(select d.id from documents d where d.client_id = ${id}::uuid and d.workspace_id = ${p.workspaceId}))
          or h.mailbox_id = ${id}::uuid`
      : sql``;
    const live = sql<LiveJob[]>`
    with m as (
      ${matching(sql`j.key = ${q}`)} union all ${matching(sql`j.task_identifier = ${q}`)} union all ${matching(sql`j.queue_name = ${q}`)}
      union all ${matching(sql`j.id in (select m.job_id from queued_jobs m where m.payload::text ilike ${like})`)})
    select ${LIVE(ctx)} from ${JOBS(sql)} where ${inWorkspace(sql, p.workspaceId)} and j.id = any(array(select m.id from m))
    order by j.id desc limit 100`;
    // the newest 100 of each way of matching, then the newest 100 of those. A task or key walks its
    // own index (task or key, started_at) newest first and stops at 100: a busy task has tens of
    // thousands of attempts, and gathering them all before sorting took 35 ms at 100,000 attempts.
    // The payload and the objects' ids are rare: a bitmap of their indexes, gathered in full.
    const newest = (cond: Fragment) =>
      sql`(select h.id from job_history h where ${historyVisible(ctx)} and ${cond} order by h.started_at desc, h.id desc limit 100)`;
    const history = sql<Attempt[]>`
    with rare as materialized (
      select h.id, h.started_at from job_history h where ${historyVisible(ctx)} and (h.payload::text ilike ${like} ${byObject})),
    m as (
      ${newest(sql`h.task = ${q}`)} union all ${newest(sql`h.job_key = ${q}`)}
      union all (select r.id from rare r order by r.started_at desc, r.id desc limit 100))
    select ${ATTEMPT(ctx)} from job_history h where h.id = any(array(select m.id from m))
    order by h.started_at desc, h.id desc limit 100`;
    // planned for q on every call: from the sixth call on, a generic plan walked every attempt (or
    // queued job) newest first for a term no task has, or every match of a busy task before sorting
    const [found, attempts] = await Promise.all([plannedPerCall(live), plannedPerCall(history)]);
    return { live: [...found], history: [...attempts] };
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
