import type { Ctx } from '../ctx.ts';
import { fold, isUuid, unknownName } from './common.ts';

/**
 * A consultant category by id or name (case- and space-insensitive) -> category id. Ids pass
 * through (the operation checks them). A name that matches nothing is 400 `unknown_category`
 * listing the workspace's categories (names are unique per workspace, so never ambiguous).
 */
export async function resolveCategoryId(ctx: Ctx, value: string, field: string): Promise<string> {
  if (isUuid(value)) return value.toLowerCase();
  const { sql, principal: p } = ctx;
  const categories = await sql<{ id: string; name: string }[]>`
    select id, name from consultant_categories where workspace_id = ${p.workspaceId} order by name, id`;
  const hit = categories.find((c) => fold(c.name) === fold(value));
  if (hit) return hit.id;
  throw unknownName('unknown_category', field, value, categories);
}
