import { z } from 'zod';
import type { Ctx } from '../ctx.ts';
import { defineOp } from '../operation.ts';
import { unknownPerson } from '../resolve/people.ts';
import { assertCategory } from '../time/categories.ts';
import { idField, withReasons } from '../validation.ts';
import { projectIdInput } from './get.ts';
import { loadProject } from './read.ts';
import { projectMemberListSchema, projectMemberSchema, type ProjectMember } from './schema.ts';
import { okSchema } from '../response-schema.ts';

const memberIds = { id: idField('The project.'), identityId: idField('The person: a workspace user (owner, admin, member or agent).') };

export const setMemberFields = z.object({
  access: z.enum(['full', 'limited']).describe('full: create, edit, move and archive the project’s tickets; limited: read, comment and log time.'),
  manager: z.boolean().default(false).describe('A project manager: reads the project’s own timesheets and the banks of its clients.'),
  categoryId: z
    .uuid()
    .toLowerCase()
    .nullable()
    .default(null)
    .describe('The consultant category this person bills as on this project; null: their membership default.'),
});

export const setMemberInput = withReasons(setMemberFields.extend(memberIds), { id: 'bad_uuid', identityId: 'bad_uuid' });
export const removeMemberInput = withReasons(z.object(memberIds), { id: 'bad_uuid', identityId: 'bad_uuid' });

async function selectMembers(ctx: Ctx, projectId: string, identityId?: string): Promise<ProjectMember[]> {
  const { sql, principal: p } = ctx;
  return sql<ProjectMember[]>`
    select pm.identity_id as "identityId", person_name(pm.workspace_id, i.id, i.name) as name, i.email, m.role,
           pm.access, pm.is_manager as manager, pm.category_id as "categoryId"
    from project_memberships pm
    join identities i on i.id = pm.identity_id
    join memberships m on m.workspace_id = pm.workspace_id and m.identity_id = pm.identity_id
    where pm.project_id = ${projectId} and pm.workspace_id = ${p.workspaceId}
      ${identityId ? sql`and pm.identity_id = ${identityId}` : sql``}
    order by lower(person_name(pm.workspace_id, i.id, i.name)), i.id`;
}

/** GET /projects/{id}/members (workspace users who may name the project, token read): its members, by name. */
export const listProjectMembers = defineOp({
  name: 'projects.members.list',
  action: 'projects.members.list',
  input: projectIdInput,
  output: projectMemberListSchema,
  run: async (ctx, { id }) => {
    await loadProject(ctx, id, { addressable: true });
    return { members: await selectMembers(ctx, id) };
  },
});

/**
 * PUT /projects/{id}/members/{identityId} (Owner/Admin): adds the person to the project, or changes
 * their access, manager flag and category. Only workspace users are project members (client users
 * see projects through their client): anyone else is 404 `unknown_person`; a category of no such
 * name 404 `unknown_category`.
 */
export const setProjectMember = defineOp({
  name: 'projects.members.set',
  action: 'projects.members.set',
  input: setMemberInput,
  output: projectMemberSchema,
  tx: true,
  audit: {
    action: 'projects.members.set',
    target: (s) => (typeof s.id === 'string' && typeof s.identityId === 'string' ? `${s.id}/${s.identityId}` : null),
    detail: (i) => `${i.access}${i.manager ? ', manager' : ''}`,
  },
  run: async (ctx, input): Promise<ProjectMember> => {
    const { sql, principal: p } = ctx;
    await loadProject(ctx, input.id, { lock: true });
    const [person] = await sql`
      select 1 from memberships where workspace_id = ${p.workspaceId} and identity_id = ${input.identityId} and client_id is null`;
    if (!person) throw unknownPerson('subject', { field: 'identityId' }, 'No such workspace user here (client users are not project members).');
    if (input.categoryId) await assertCategory(ctx, input.categoryId);
    await sql`
      insert into project_memberships (project_id, identity_id, workspace_id, access, is_manager, category_id, created_at)
      values (${input.id}, ${input.identityId}, ${p.workspaceId}, ${input.access}, ${input.manager}, ${input.categoryId}, ${ctx.now()})
      on conflict (project_id, identity_id) do update set access = excluded.access, is_manager = excluded.is_manager, category_id = excluded.category_id`;
    const [member] = await selectMembers(ctx, input.id, input.identityId);
    return member!;
  },
});

/**
 * DELETE /projects/{id}/members/{identityId} (Owner/Admin): ends the membership. Their time, the
 * tickets they reported or are assigned to, and their comments stay; they keep seeing the tickets
 * they reported, are assigned to or view. Not a member: 404 `unknown_person`.
 */
export const removeProjectMember = defineOp({
  name: 'projects.members.remove',
  action: 'projects.members.remove',
  input: removeMemberInput,
  output: okSchema,
  tx: true,
  audit: {
    action: 'projects.members.remove',
    target: (s) => (typeof s.id === 'string' && typeof s.identityId === 'string' ? `${s.id}/${s.identityId}` : null),
  },
  run: async (ctx, input): Promise<{ ok: true }> => {
    await loadProject(ctx, input.id, { lock: true });
    const [gone] = await ctx.sql`
      delete from project_memberships where project_id = ${input.id} and identity_id = ${input.identityId} and workspace_id = ${ctx.principal.workspaceId}
      returning 1`;
    if (!gone) throw unknownPerson('subject', { field: 'identityId' }, 'This person is not a member of the project.');
    return { ok: true };
  },
});
