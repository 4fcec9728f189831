import { z } from 'zod';
import { defineOp } from '../operation.ts';
import type { AuditRecord } from './audit.ts';

export const listAuditInput = z.object({
  limit: z.number().int().min(1).max(500).default(200).describe('How many records, newest first.'),
});

/** The workspace's audited actions (every door), newest first: the console's audit page. */
export const listAudit = defineOp({
  name: 'ops.audit.list',
  action: 'ops.read',
  input: listAuditInput,
  output: null,
  run: (ctx, q): Promise<AuditRecord[]> => ctx.sql<AuditRecord[]>`
    select id::text, actor_name as "actorName", door, action, target, outcome, detail, at
    from ops_audit where workspace_id = ${ctx.principal.workspaceId}
    order by at desc, id desc limit ${q.limit}`,
});
