import type { Door } from '../auth/principal.ts';
import type { Ctx } from '../ctx.ts';
import { AppError } from '../errors.ts';

/** One audited action as the audit page lists it. */
export interface AuditRecord {
  id: string;
  actorName: string;
  /** The way it came in: the console, REST, MCP, the CLI or a job. */
  door: Door;
  action: string;
  target: string | null;
  outcome: 'succeeded' | 'failed' | 'refused';
  detail: string | null;
  at: Date;
}

const outcomeOf = (err: unknown): 'failed' | 'refused' =>
  err instanceof AppError && (err.code === 'forbidden' || err.code === 'unauthenticated') ? 'refused' : 'failed';

/**
 * Runs one action and records it (who, through which door, what, target, when, outcome),
 * refusals and failures too: written on the pool, after the action's own transaction ended, so a
 * rolled-back action still leaves its record. The operation records itself (a void, a resend, a
 * role change), so every door that calls it is in the same log; a caller that adds its own checks
 * around one (the console's typed confirmation) wraps the same record: `fn` gets a context marked
 * as audited, and an audited operation called with it adds no second row.
 */
export async function audited<T>(ctx: Ctx, action: string, target: string | null, fn: (ctx: Ctx) => Promise<T>, detail?: (r: T) => string | null): Promise<T> {
  if (ctx.auditing) return fn(ctx);
  const p = ctx.principal;
  const record = (outcome: AuditRecord['outcome'], text: string | null) => ctx.sql`
    insert into ops_audit (workspace_id, actor_id, actor_name, door, action, target, outcome, detail, at)
    values (${p.workspaceId}, ${p.identityId}, ${p.name}, ${p.door}, ${action}, ${target?.slice(0, 500) ?? null}, ${outcome},
            ${text?.slice(0, 2000) ?? null}, ${ctx.now()})`;
  try {
    const result = await fn({ ...ctx, auditing: true });
    await record('succeeded', detail?.(result) ?? null);
    return result;
  } catch (err) {
    await record(outcomeOf(err), err instanceof Error ? err.message : String(err));
    throw err;
  }
}
