import { z } from 'zod';
import { addressableProject } from '../access/visible.ts';
import { defineOp } from '../operation.ts';

export interface ProjectListItem {
  id: string;
  key: string;
  name: string;
  billingClient: { id: string; code: string; name: string } | null;
  /** The caller's own membership of the project; null when not a member. */
  membership: { access: 'full' | 'limited'; isManager: boolean } | null;
}

/**
 * The projects the caller may address by name, ordered by key: the same set the project resolver
 * lists as choices (`addressableProject`, src/core/access/visible.ts).
 */
export const listProjects = defineOp({
  name: 'projects.list',
  action: 'projects.list',
  input: z.object({}),
  // no REST route: list_projects shapes its own result
  output: null,
  run: async (ctx): Promise<{ projects: ProjectListItem[] }> => {
    const { sql, principal: p } = ctx;
    const projects = await sql<ProjectListItem[]>`
    select pr.id, pr.key, pr.name,
           case when c.id is null then null else json_build_object('id', c.id, 'code', c.code, 'name', c.name) end as "billingClient",
           case when pm.project_id is null then null else json_build_object('access', pm.access, 'isManager', pm.is_manager) end as membership
    from projects pr
    left join clients c on c.id = pr.billing_client_id
    left join project_memberships pm on pm.project_id = pr.id and pm.identity_id = ${p.identityId}
    where pr.workspace_id = ${p.workspaceId}
      and ${addressableProject(sql, p, 'pr')}
    order by pr.key`;
    return { projects: [...projects] };
  },
});
