import { z } from 'zod';
import { addressableProject } from '../access/visible.ts';
import { defineOp } from '../operation.ts';
import { isoSql } from '../tickets/summary.ts';
import { projectListSchema, type ProjectListItem } from './schema.ts';

export type { ProjectListItem } from './schema.ts';

export const listProjectsInput = z.object({
  archived: z
    .enum(['true', 'false', 'all'])
    .default('false')
    .describe('false (default): active projects; true: archived ones only; all: both. An archived key still resolves.'),
});

/**
 * The projects the caller may address by name, ordered by key: the same set the project resolver
 * lists as choices (`addressableProject`, src/core/access/visible.ts). GET /projects and list_projects;
 * archived projects only when asked for (their keys still resolve).
 */
export const listProjects = defineOp({
  name: 'projects.list',
  action: 'projects.list',
  input: listProjectsInput,
  output: projectListSchema,
  run: async (ctx, input): Promise<{ projects: ProjectListItem[] }> => {
    const { sql, principal: p } = ctx;
    const archived = input.archived === 'all' ? sql`` : input.archived === 'true' ? sql`and pr.archived_at is not null` : sql`and pr.archived_at is null`;
    const projects = await sql<ProjectListItem[]>`
    select pr.id, pr.key, pr.name,
           case when c.id is null then null else json_build_object('id', c.id, 'code', c.code, 'name', c.name) end as "billingClient",
           case when pm.project_id is null then null else json_build_object('access', pm.access, 'isManager', pm.is_manager) end as membership,
           ${isoSql(sql, sql`pr.archived_at`)} as "archivedAt"
    from projects pr
    left join clients c on c.id = pr.billing_client_id
    left join project_memberships pm on pm.project_id = pr.id and pm.identity_id = ${p.identityId}
    where pr.workspace_id = ${p.workspaceId}
      and ${addressableProject(sql, p, 'pr')} ${archived}
    order by pr.key`;
    return { projects: [...projects] };
  },
});
