import { z } from 'zod';
import type { Db } from '../../../db/connect.ts';
import { conflict, notFound } from '../../errors.ts';
import { jobTx, type JobCtx } from '../../jobs/ctx.ts';
import { pollJob } from '../../jobs/catalog.ts';
import { enqueue } from '../../jobs/enqueue.ts';
import { defineOp } from '../../operation.ts';
import { pollQueuedSchema } from './schema.ts';

/**
 * Queues a poll of one mailbox. One job key per mailbox: while a poll waits or runs another adds
 * nothing (enqueue's dedupe), so polls never pile up; one queue per mailbox: its polls run one
 * at a time whichever worker process takes them. One attempt: the poll records its own failure
 * (lastError) and the next request is the retry. A poll job that failed anyway (the database
 * went away mid-poll) keeps its key, and the dedupe would keep every later poll out for good:
 * such a job is put back to run now, as a fresh one.
 */
export async function enqueuePoll(sql: Db, mailbox: { id: string; workspaceId: string }): Promise<void> {
  const payload = { workspaceId: mailbox.workspaceId, mailboxId: mailbox.id };
  await enqueue(sql, pollJob, payload);
  const jobKey = pollJob.key(payload);
  await sql`
    select graphile_worker.reschedule_jobs(array(select j.id from graphile_worker.jobs j where j.key = ${jobKey} and j.locked_at is null and j.attempts > 0),
                                           run_at => now(), attempts => 0)`;
}

/** The `mail:schedule` job, on the crontab every minute: a poll for every enabled mailbox. */
export async function schedulePolls(ctx: JobCtx): Promise<{ queued: number }> {
  return jobTx(ctx, async ({ sql }) => {
    const rows = await sql<{ id: string; workspaceId: string }[]>`select id, workspace_id as "workspaceId" from mailboxes where enabled order by id`;
    for (const r of rows) await enqueuePoll(sql, r);
    return { queued: rows.length };
  });
}

/** POST /mailbox/poll: polls now (202), the same job as the minute's, so never beside one already waiting or running. */
export const requestPoll = defineOp({
  name: 'mailbox.poll',
  action: 'mailbox.poll',
  input: z.object({}),
  output: pollQueuedSchema,
  tx: true,
  run: async ({ sql, principal: p }): Promise<{ queued: true }> => {
    const [mb] = await sql<{ id: string; enabled: boolean }[]>`select id, enabled from mailboxes where workspace_id = ${p.workspaceId}`;
    if (!mb) throw notFound('no_mailbox', undefined, 'This workspace has no mailbox.');
    if (!mb.enabled) throw conflict('mailbox_disabled', undefined, 'The mailbox is disabled; enable it to poll it.');
    await enqueuePoll(sql, { id: mb.id, workspaceId: p.workspaceId });
    return { queued: true as const };
  },
});
