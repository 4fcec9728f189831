import { addressableProject } from '../access/visible.ts';
import type { Ctx } from '../ctx.ts';
import { ambiguousName, fold, isUuid } from './common.ts';
import { resolveProjectId } from './projects.ts';

/**
 * A project by id, key (any key it ever had) or name, case-insensitive -> project id. A key wins
 * over a name; a name two projects share is 400 `ambiguous_project` listing them; nothing
 * Names match only among the projects the caller may address (`addressableProject`), so an
 * ambiguity never names another project. Nothing
 * matching is resolveProjectId's 400 `unknown_project` with the projects the caller may address.
 * Whether the caller may use the project stays the operation's answer, as for an id.
 */
export async function resolveProjectRef(ctx: Ctx, value: string, field: string): Promise<string> {
  if (isUuid(value)) return value.toLowerCase();
  const { sql, principal: p } = ctx;
  const hits = await sql<{ id: string; key: string; name: string; byKey: boolean }[]>`
    select pr.id, pr.key, pr.name,
           exists (select 1 from project_prefixes pp where pp.project_id = pr.id and pp.workspace_id = ${p.workspaceId}
                   and pp.prefix = ${value.trim().toUpperCase()}) as "byKey"
    from projects pr
    where pr.workspace_id = ${p.workspaceId}
      and ((lower(regexp_replace(trim(pr.name), '\\s+', ' ', 'g')) = ${fold(value)} and ${addressableProject(sql, p, 'pr')})
           or exists (select 1 from project_prefixes pp where pp.project_id = pr.id and pp.workspace_id = ${p.workspaceId}
                      and pp.prefix = ${value.trim().toUpperCase()}))
    order by 4 desc, pr.key`;
  const byKey = hits.find((h) => h.byKey);
  if (byKey) return byKey.id;
  if (hits.length === 1) return hits[0]!.id;
  if (hits.length > 1)
    throw ambiguousName(
      'ambiguous_project',
      field,
      value,
      hits.map(({ id, key, name }) => ({ id, key, name })),
    );
  return resolveProjectId(ctx, value, field);
}
