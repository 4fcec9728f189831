import { z } from 'zod';
import { idField, withReasons } from '../validation.ts';
import type { Ctx } from '../ctx.ts';
import { conflict, notFound } from '../errors.ts';
import { defineOp } from '../operation.ts';
import { unknownPerson } from '../resolve/people.ts';
import { categoryListSchema, categorySchema, projectCategorySchema, type Category } from './categories-schema.ts';

export type { Category } from './categories-schema.ts';

export const createCategoryInput = z.object({
  name: z.string().trim().min(1).max(100).describe('Name of the consultant category, unique in the workspace (case-insensitive), 1-100 characters'),
});

export const projectCategoryFields = z.object({
  categoryId: z.uuid().nullable().describe("The category this person bills as on this project; null falls back to the membership's default"),
});

const projectCategoryInput = withReasons(projectCategoryFields.extend({ projectId: idField('The project.'), identityId: idField('The project member.') }), {
  projectId: 'bad_uuid',
  identityId: 'bad_uuid',
});

/** GET /categories: the workspace's consultant categories, by name. */
export const listCategories = defineOp({
  name: 'categories.list',
  action: 'categories.list',
  input: z.object({}),
  output: categoryListSchema,
  run: async (ctx): Promise<{ categories: Category[] }> => {
    const rows = await ctx.sql<Category[]>`
      select id, name from consultant_categories where workspace_id = ${ctx.principal.workspaceId} order by lower(name), id`;
    return { categories: [...rows] };
  },
});

/** POST /categories (Owner or Admin, browser session). A name already taken is 409 `category_exists`. */
export const createCategory = defineOp({
  name: 'categories.create',
  action: 'categories.create',
  input: createCategoryInput,
  output: categorySchema,
  // audited as its rename and delete are (categories-admin.ts): every administrative write is, whatever the door
  audit: { action: 'categories.create', target: (s) => (typeof s.name === 'string' ? s.name : null) },
  run: async (ctx, body): Promise<Category> => {
    const [row] = await ctx.sql<Category[]>`
      insert into consultant_categories (workspace_id, name) values (${ctx.principal.workspaceId}, ${body.name})
      on conflict do nothing returning id, name`;
    if (!row) throw conflict('category_exists', { name: body.name }, 'A category with this name exists.');
    return row;
  },
});

/** 404 `unknown_category` unless the id names a category of the workspace. */
export async function assertCategory(ctx: Ctx, categoryId: string): Promise<void> {
  const [row] = await ctx.sql`select 1 from consultant_categories where id = ${categoryId} and workspace_id = ${ctx.principal.workspaceId}`;
  if (!row) throw notFound('unknown_category', { field: 'categoryId' }, 'No such consultant category.');
}

/**
 * PUT /projects/{projectId}/members/{identityId}/category (Owner or Admin, browser session):
 * the project membership's category override, which wins over the membership default when time is logged.
 */
export const setProjectCategory = defineOp({
  name: 'categories.assign',
  action: 'categories.assign',
  input: projectCategoryInput,
  output: projectCategorySchema,
  run: async (ctx, body): Promise<{ projectId: string; identityId: string; categoryId: string | null }> => {
    const { projectId, identityId } = body;
    if (body.categoryId) await assertCategory(ctx, body.categoryId);
    const [row] = await ctx.sql<{ categoryId: string | null }[]>`
      update project_memberships set category_id = ${body.categoryId}
      where project_id = ${projectId} and identity_id = ${identityId} and workspace_id = ${ctx.principal.workspaceId}
      returning category_id as "categoryId"`;
    if (!row) throw unknownPerson('subject', { identityId }, 'This person is not a member of the project.');
    return { projectId, identityId, categoryId: row.categoryId };
  },
});
