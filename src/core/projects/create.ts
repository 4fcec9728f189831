import { z } from 'zod';
import { defineOp } from '../operation.ts';
import { withReasons } from '../validation.ts';
import { loadProject } from './read.ts';
import { assertKeyFree, checkClients, checkProjectBank } from './rules.ts';
import {
  billingClientField,
  collaboratorsField,
  projectKeyField,
  projectModeField,
  projectNameField,
  projectPolicyField,
  projectSchema,
  type Project,
} from './schema.ts';
import type { Ctx } from '../ctx.ts';

export const createProjectInput = withReasons(
  z.object({
    key: projectKeyField,
    name: projectNameField,
    billingClientId: billingClientField.default(null),
    billingPolicy: projectPolicyField.default(null),
    billingMode: projectModeField.default(null),
    collaboratorIds: collaboratorsField.default([]),
  }),
  { billingPolicy: 'policy_format' },
);

/** Replaces the project's collaborating clients with `ids`. */
export async function setCollaborators(ctx: Ctx, projectId: string, ids: string[]): Promise<void> {
  await ctx.sql`delete from project_collaborators where project_id = ${projectId} and client_id <> all(${ids}::uuid[])`;
  await ctx.sql`
    insert into project_collaborators (project_id, client_id) select ${projectId}, unnest(${ids}::uuid[])
    on conflict do nothing`;
}

/**
 * POST /projects (Owner/Admin): a new project with no members yet (Owner and Admin see every
 * project; add people with PUT /projects/{id}/members/{identityId}). Its key starts its human ids.
 */
export const createProject = defineOp({
  name: 'projects.create',
  action: 'projects.create',
  input: createProjectInput,
  output: projectSchema,
  tx: true,
  audit: { action: 'projects.create', target: (s) => (typeof s.key === 'string' ? s.key : null) },
  run: async (ctx, input): Promise<Project> => {
    const { sql, principal: p } = ctx;
    await checkClients(ctx, input.billingClientId, input.collaboratorIds);
    await checkProjectBank(ctx, input.billingPolicy, input.billingClientId);
    // one creator or renamer of a key at a time: the check below and the insert see each other
    await sql`select pg_advisory_xact_lock(hashtext('project_keys'), hashtext(${p.workspaceId}))`;
    await assertKeyFree(ctx, input.key, null);
    const [row] = await sql<{ id: string }[]>`
      insert into projects (workspace_id, key, name, billing_client_id, billing_policy, billing_mode, created_at)
      values (${p.workspaceId}, ${input.key}, ${input.name}, ${input.billingClientId}, ${input.billingPolicy?.toLowerCase() ?? null},
              ${input.billingMode}, ${ctx.now()})
      returning id`;
    await sql`insert into project_prefixes (workspace_id, prefix, project_id) values (${p.workspaceId}, ${input.key}, ${row!.id})`;
    await setCollaborators(ctx, row!.id, input.collaboratorIds);
    return loadProject(ctx, row!.id);
  },
});
