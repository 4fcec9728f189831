import { addressableProject } from '../access/visible.ts';
import { isClientRole } from '../auth/principal.ts';
import type { Ctx } from '../ctx.ts';
import { ambiguousName, fold, isUuid, unknownName } from './common.ts';

/**
 * A project by id or key (any key it ever had, case-insensitive) -> project id. Ids pass through.
 * An unknown key is 400 `unknown_project` listing the projects the caller may address
 * (`addressableProject`).
 */
export async function resolveProjectId(ctx: Ctx, value: string, field: string): Promise<string> {
  if (isUuid(value)) return value.toLowerCase();
  const { sql, principal: p } = ctx;
  const [hit] = await sql<{ id: string }[]>`
    select pp.project_id as id from project_prefixes pp where pp.workspace_id = ${p.workspaceId} and pp.prefix = ${value.trim().toUpperCase()}`;
  if (hit) return hit.id;
  const choices = await sql<{ id: string; key: string; name: string }[]>`
    select pr.id, pr.key, pr.name from projects pr
    where pr.workspace_id = ${p.workspaceId} and ${addressableProject(sql, p, 'pr')}
    order by pr.key`;
  throw unknownName('unknown_project', field, value, choices);
}

/**
 * A client by id, code or name (case-insensitive) -> client id. With `allowNone`, `none` passes
 * through (the ticket filters' "internal work"). Choices are listed to workspace users only.
 */
export async function resolveClientId(ctx: Ctx, value: string, field: string, opts: { allowNone?: boolean } = {}): Promise<string> {
  if (isUuid(value)) return value.toLowerCase();
  if (opts.allowNone && fold(value) === 'none') return 'none';
  const { sql, principal: p } = ctx;
  const v = fold(value);
  const hits = await sql<{ id: string; code: string; name: string }[]>`
    select c.id, c.code, c.name from clients c
    where c.workspace_id = ${p.workspaceId} and (c.code = ${value.trim().toUpperCase()} or lower(c.name) = ${v})
    order by c.code = ${value.trim().toUpperCase()} desc, c.name`;
  if (hits.length === 1 || (hits.length > 1 && hits[0]!.code === value.trim().toUpperCase())) return hits[0]!.id;
  if (hits.length > 1) throw ambiguousName('ambiguous_client', field, value, hits);
  const choices = isClientRole(p.role)
    ? []
    : await sql<
        { id: string; code: string; name: string }[]
      >`select c.id, c.code, c.name from clients c where c.workspace_id = ${p.workspaceId} order by c.name`;
  throw unknownName('unknown_client', field, value, choices);
}
