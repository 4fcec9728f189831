import type { Ctx } from '../ctx.ts';
import { notFound } from '../errors.ts';
import { addressableProject } from '../access/visible.ts';
import { isoSql } from '../tickets/summary.ts';
import type { Project } from './schema.ts';

/**
 * The project `id` as the admin routes show it, or 404 `unknown_project`: another workspace's,
 * and (with `addressable`) one the caller may not name (a member's project they do not belong to,
 * outside a token's allow-list) are unknown too. `lock` holds its row for the transaction.
 */
export async function loadProject(ctx: Ctx, id: string, opts: { lock?: boolean; addressable?: boolean } = {}): Promise<Project> {
  const { sql, principal: p } = ctx;
  const [row] = await sql<Project[]>`
    select pr.id, pr.key, pr.name, pr.billing_client_id as "billingClientId", pr.billing_policy as "billingPolicy",
           pr.billing_mode as "billingMode",
           array(select pc.client_id from project_collaborators pc where pc.project_id = pr.id order by pc.client_id)::text[] as "collaboratorIds",
           array(select pp.prefix from project_prefixes pp where pp.project_id = pr.id and pp.prefix <> pr.key order by pp.prefix)::text[] as "formerKeys",
           ${isoSql(sql, sql`pr.archived_at`)} as "archivedAt", ${isoSql(sql, sql`pr.created_at`)} as "createdAt"
    from projects pr
    where pr.id = ${id} and pr.workspace_id = ${p.workspaceId}
      ${opts.addressable ? sql`and ${addressableProject(sql, p, 'pr')}` : sql``}
    ${opts.lock ? sql`for no key update of pr` : sql``}`;
  if (!row) throw notFound('unknown_project', undefined, 'No such project.');
  return row;
}
