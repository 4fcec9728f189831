import { z } from 'zod';
import type { Ctx } from '../ctx.ts';
import { conflict, notFound } from '../errors.ts';
import { defineOp } from '../operation.ts';
import { okSchema } from '../response-schema.ts';
import { idField, withReasons } from '../validation.ts';
import { categorySchema } from './categories-schema.ts';
import type { Category } from './categories.ts';

/** Renaming and deleting consultant categories (issue 22); listing, creating and assigning are in categories.ts. */

export const renameCategoryFields = z.object({
  name: z.string().trim().min(1).max(100).describe('New name, unique in the workspace (case-insensitive), 1-100 characters'),
});

export const renameCategoryInput = withReasons(renameCategoryFields.extend({ id: idField('The category.') }), { id: 'bad_uuid' });
export const deleteCategoryInput = withReasons(z.object({ id: idField('The category.') }), { id: 'bad_uuid' });

/** The category `id` of the caller's workspace, its row locked for the transaction; else 404 `unknown_category`. */
async function lockCategory(ctx: Ctx, id: string): Promise<Category> {
  const [row] = await ctx.sql<Category[]>`
    select id, name from consultant_categories where id = ${id} and workspace_id = ${ctx.principal.workspaceId} for update`;
  if (!row) throw notFound('unknown_category', { field: 'id' }, 'No such consultant category.');
  return row;
}

/**
 * PATCH /categories/{id} (Owner/Admin): renames a category. Time already logged under it shows the
 * new name from now on (entries name the category, not its text); a name another category has, in
 * any case, is 409 `category_exists`.
 */
export const renameCategory = defineOp({
  name: 'categories.update',
  action: 'categories.update',
  input: renameCategoryInput,
  output: categorySchema,
  tx: true,
  audit: { action: 'categories.update', target: (s) => (typeof s.id === 'string' ? s.id : null), detail: (i) => i.name },
  run: async (ctx, input): Promise<Category> => {
    await lockCategory(ctx, input.id);
    const [taken] = await ctx.sql`
      select 1 from consultant_categories where workspace_id = ${ctx.principal.workspaceId} and lower(name) = lower(${input.name}) and id <> ${input.id}`;
    if (taken) throw conflict('category_exists', { field: 'name', name: input.name }, 'A category with this name exists.');
    const [row] = await ctx.sql<Category[]>`update consultant_categories set name = ${input.name} where id = ${input.id} returning id, name`;
    return row!;
  },
});

/**
 * DELETE /categories/{id} (Owner/Admin): deletes a category nothing uses. While a time entry, a
 * person's default or a project membership names it, 409 `in_use` with the counts: time logged
 * under it would lose its category (and a timesheet its line), so the admin moves them first.
 */
export const deleteCategory = defineOp({
  name: 'categories.delete',
  action: 'categories.delete',
  input: deleteCategoryInput,
  output: okSchema,
  tx: true,
  audit: { action: 'categories.delete', target: (s) => (typeof s.id === 'string' ? s.id : null) },
  run: async (ctx, { id }): Promise<{ ok: true }> => {
    const { sql, principal: p } = ctx;
    await lockCategory(ctx, id);
    const [use] = await sql<{ entries: number; members: number; projectMembers: number }[]>`
      select (select count(*)::int from time_entries where workspace_id = ${p.workspaceId} and category_id = ${id}) as entries,
             (select count(*)::int from memberships where workspace_id = ${p.workspaceId} and category_id = ${id}) as members,
             (select count(*)::int from project_memberships where workspace_id = ${p.workspaceId} and category_id = ${id}) as "projectMembers"`;
    if (use!.entries + use!.members + use!.projectMembers > 0) {
      throw conflict('in_use', { ...use }, 'This category is in use (time entries, people or project memberships name it); reassign them first.');
    }
    await sql`delete from consultant_categories where id = ${id}`;
    return { ok: true };
  },
});
