import type { Db } from '../../db/connect.ts';
import { deliverJob } from '../jobs/catalog.ts';
import { settleStopped } from './stopped-deliveries.ts';

/** The deliveries' jobs (by the declared key) that can still run: one with attempts left (waiting, or running), or one running now, its last attempt included. */
const liveJobs = (sql: Db, deliveries: { id: string; workspaceId: string }[]) => sql<{ key: string }[]>`
  select j.key from graphile_worker.jobs j
  where j.key = any(${deliveries.map((d) => deliverJob.key({ workspaceId: d.workspaceId, deliveryId: d.id }))}::text[])
    and (j.attempts < j.max_attempts or j.locked_at is not null)`;

/**
 * The `deliveries:sweep` cron task: settles every pending delivery whose job can no longer run —
 * gone (cancelled by an operator), or out of attempts and not running (a worker killed during the
 * last attempt: graphile-worker never runs a job again once attempts reach max_attempts, and the
 * liveness sweep unlocks a dead worker's jobs after 30 s). Each one is checked again under its row
 * lock in a transaction of its own (a resend may have queued a new job meanwhile), and settled by
 * settleStopped, which also moves its run along. Answers how many it settled.
 */
export async function settleAbandonedDeliveries(sql: Db, now: Date): Promise<number> {
  const pending = await sql<{ id: string; workspaceId: string }[]>`
    select id, workspace_id as "workspaceId" from document_deliveries where state = 'pending'`;
  if (pending.length === 0) return 0;
  const live = new Set((await liveJobs(sql, pending)).map((j) => j.key));
  const candidates = pending.filter((d) => !live.has(deliverJob.key({ workspaceId: d.workspaceId, deliveryId: d.id })));
  let settled = 0;
  for (const d of candidates) {
    const done = await sql.begin(async (t) => {
      const tx = t as unknown as Db;
      const [still] = await tx`select 1 from document_deliveries where id = ${d.id} and state = 'pending' for update skip locked`;
      if (!still || (await liveJobs(tx, [d])).length > 0) return false;
      return settleStopped(tx, d.id, 'The delivery job stopped and cannot run again', now);
    });
    if (done) settled++;
  }
  return settled;
}
