import { z } from 'zod';
import type { Db } from '../../db/connect.ts';
import { defineOp } from '../operation.ts';
import { rateListSchema, type Rate } from './schema.ts';

/** Every rate of the workspace, in a stable order (category, scope, currency, date). */
export async function readRates(sql: Db, workspaceId: string): Promise<Rate[]> {
  return sql<Rate[]>`
    select r.id, r.category_id as "categoryId", r.client_id as "clientId", r.project_id as "projectId", r.currency,
           r.hourly_minor as "hourlyRateMinor", r.effective_from::text as "effectiveFrom",
           cc.name as "categoryName", c.code as "clientCode", pr.key as "projectKey"
    from rates r join consultant_categories cc on cc.id = r.category_id
    left join clients c on c.id = r.client_id
    left join projects pr on pr.id = r.project_id
    where r.workspace_id = ${workspaceId}
    order by lower(cc.name), r.category_id, r.project_id nulls first, r.client_id nulls first, r.currency, r.effective_from`;
}

/** GET /rates (Owner/Admin by session or an admin-scoped token): the workspace's rates. Read-only: no transaction. */
export const listRates = defineOp({
  name: 'rates.list',
  action: 'rates.list',
  input: z.object({}),
  output: rateListSchema,
  run: async (ctx): Promise<{ rates: Rate[] }> => ({ rates: await readRates(ctx.sql, ctx.principal.workspaceId) }),
});
