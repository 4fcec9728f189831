import { z } from 'zod';
import { deleteCategory, renameCategory, renameCategoryFields } from '../../core/time/categories-admin.ts';
import { defineRoute, idParam } from '../route-table.ts';

const byId = z.object({ id: idParam() });

/** Renaming and deleting consultant categories (issue 22); list and create are with the time routes. */
export const categoriesRoutes = [
  defineRoute({ method: 'PATCH', path: '/categories/:id', op: renameCategory, input: { params: byId, body: renameCategoryFields } }),
  defineRoute({ method: 'DELETE', path: '/categories/:id', op: deleteCategory, input: { params: byId } }),
];
