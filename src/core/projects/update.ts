import { z } from 'zod';
import { defineOp } from '../operation.ts';
import { idField, withReasons } from '../validation.ts';
import { setCollaborators } from './create.ts';
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

export const updateProjectFields = z.object({
  key: projectKeyField.optional(),
  name: projectNameField.optional(),
  billingClientId: billingClientField.optional(),
  billingPolicy: projectPolicyField.optional(),
  billingMode: projectModeField.optional(),
  collaboratorIds: collaboratorsField.optional(),
});

export const updateProjectInput = withReasons(updateProjectFields.extend({ id: idField('The project.') }), { id: 'bad_uuid', billingPolicy: 'policy_format' });

/**
 * PATCH /projects/{id} (Owner/Admin): changes the fields sent.
 * - A new key names the project's next tickets; the old key stays the project's (project_prefixes),
 *   so every human id it ever gave (`OLD-12`, and `NEW-12` for the same number) still opens its
 *   ticket, and no other project may take it. Tickets keep their numbers (ticket_refs unchanged).
 * - The billing client, policy and mode are the defaults of tickets made from now on; existing
 *   tickets and logged time keep their attribution (POST /time/tickets/{id}/reattribute moves a
 *   ticket's unbilled time). A collaborator removed stays on tickets already billed to it.
 */
export const updateProject = defineOp({
  name: 'projects.update',
  action: 'projects.update',
  input: updateProjectInput,
  output: projectSchema,
  tx: true,
  audit: {
    action: 'projects.update',
    target: (s) => (typeof s.id === 'string' ? s.id : null),
    detail: (i, r: Project) =>
      [i.key !== undefined ? `key ${r.key}` : null, ...Object.keys(i).filter((k) => k !== 'id' && k !== 'key')].filter(Boolean).join(', '),
  },
  run: async (ctx, input): Promise<Project> => {
    const { sql, principal: p } = ctx;
    const before = await loadProject(ctx, input.id, { lock: true });
    const billingClientId = input.billingClientId === undefined ? before.billingClientId : input.billingClientId;
    const collaboratorIds = input.collaboratorIds ?? before.collaboratorIds;
    const billingPolicy = input.billingPolicy === undefined ? before.billingPolicy : (input.billingPolicy?.toLowerCase() ?? null);
    if (input.billingClientId !== undefined || input.collaboratorIds !== undefined) {
      await checkClients(ctx, billingClientId, collaboratorIds, [...(before.billingClientId ? [before.billingClientId] : []), ...before.collaboratorIds]);
    }
    if (input.billingPolicy !== undefined || input.billingClientId !== undefined) await checkProjectBank(ctx, billingPolicy, billingClientId);
    const key = input.key ?? before.key;
    if (key !== before.key) {
      await sql`select pg_advisory_xact_lock(hashtext('project_keys'), hashtext(${p.workspaceId}))`;
      await assertKeyFree(ctx, key, input.id);
      await sql`
        insert into project_prefixes (workspace_id, prefix, project_id) values (${p.workspaceId}, ${key}, ${input.id})
        on conflict (workspace_id, prefix) do nothing`;
    }
    await sql`
      update projects set key = ${key}, name = ${input.name ?? before.name}, billing_client_id = ${billingClientId},
        billing_policy = ${billingPolicy}, billing_mode = ${input.billingMode === undefined ? before.billingMode : input.billingMode}
      where id = ${input.id}`;
    if (input.collaboratorIds) await setCollaborators(ctx, input.id, input.collaboratorIds);
    return loadProject(ctx, input.id);
  },
});
