import { z } from 'zod';
import type { Ctx } from '../ctx.ts';
import { defineOp } from '../operation.ts';
import { workflowSchema, type Workflow } from './schema.ts';

export type { Workflow } from './schema.ts';

/**
 * GET /workflow: everything a client needs to render and validate ticket fields. Served from
 * the process cache when there is one (invalidated by NOTIFY from triggers on the workflow tables).
 */
export const getWorkflow = defineOp({
  name: 'workflow.read',
  action: 'workflow.read',
  input: z.object({}),
  output: workflowSchema,
  run: (ctx): Promise<Workflow> => {
    const ws = ctx.principal.workspaceId;
    if (ctx.caches) return ctx.caches.workflow.get(ws, () => loadWorkflow(ctx, ws)) as Promise<Workflow>;
    return loadWorkflow(ctx, ws);
  },
});

async function loadWorkflow(ctx: Ctx, ws: string): Promise<Workflow> {
  const [row] = await ctx.sql<[{ workflow: Workflow }]>`
    select json_build_object(
      'states', coalesce((select json_agg(json_build_object('id', id, 'key', key, 'name', name, 'category', category, 'position', position,
                  'isDefault', is_default, 'isCustomerResolve', is_customer_resolve) order by position, key)
                from workflow_states where workspace_id = ${ws}), '[]'),
      'kinds', coalesce((select json_agg(json_build_object('id', id, 'key', key, 'name', name, 'position', position, 'isInbound', is_inbound) order by position, key)
                from ticket_kinds where workspace_id = ${ws}), '[]'),
      'priorities', coalesce((select json_agg(json_build_object('id', id, 'key', key, 'name', name, 'position', position, 'isDefault', is_default) order by position, key)
                from priorities where workspace_id = ${ws}), '[]'),
      'labels', coalesce((select json_agg(json_build_object('id', id, 'name', name, 'color', color) order by lower(name))
                from labels where workspace_id = ${ws}), '[]')
    ) as workflow`;
  return row.workflow;
}
