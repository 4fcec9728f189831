import { deleteCategory, renameCategory } from '../../core/time/categories-admin.ts';
import { createCategory, listCategories } from '../../core/time/categories.ts';
import { runOp } from '../../core/operation.ts';
import { defineAction, withMessage, type OpsRequest, type OpsRoute } from '../route.ts';
import { html } from '../html.ts';
import { formHead, rowButton, setupPage, stackedTable } from './setup-common.ts';

const BACK = '/ops/setup/categories';

/** Consultant categories: the role a person bills as. Create, rename, delete (refused while in use). */
async function categoriesPage(r: OpsRequest) {
  const { categories } = await runOp(listCategories, r.ctx, {});
  const rows = categories.map((c) => [
    html`${c.name}`,
    html`<form method="post" action="/ops/setup/categories/rename" class="row-form">
      ${formHead(r, BACK)}<input type="hidden" name="id" value="${c.id}" />
      <input name="name" aria-label="New name of ${c.name}" value="${c.name}" required />
      <button type="submit">Rename ${c.name}</button>
    </form>`,
    rowButton(r, '/ops/setup/categories/delete', BACK, `Delete ${c.name}`, { id: c.id }, 'danger'),
  ]);
  return setupPage(
    r,
    'categories',
    'Categories',
    html`<p>A consultant category is the role a person bills as (e.g. Senior developer): a person’s default, or theirs on one project.</p>
      <h2>New category</h2>
      <form method="post" action="/ops/setup/categories" class="stack">
        ${formHead(r, BACK)}
        <label for="category-name">Name <input id="category-name" name="name" required /></label>
        <button type="submit">Create category</button>
      </form>
      <h2>Categories</h2>
      ${stackedTable('Consultant categories by name', ['Name', 'Rename', 'Delete'], rows, 'No category yet.')}`,
  );
}

export const setupCategoryPages: OpsRoute[] = [
  { method: 'GET', path: '/setup/categories', page: categoriesPage },
  defineAction({
    method: 'POST',
    path: '/setup/categories',
    op: createCategory,
    sent: (r) => ({ name: r.body.name ?? '' }),
    answer: (c) => ({ redirect: withMessage(BACK, 'msg', `Category ${c.name} is created.`) }),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/categories/rename',
    op: renameCategory,
    sent: (r) => ({ id: r.body.id ?? '', name: r.body.name ?? '' }),
    answer: (c) => ({ redirect: withMessage(BACK, 'msg', `The category is now called ${c.name}.`) }),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/categories/delete',
    op: deleteCategory,
    sent: (r) => ({ id: r.body.id ?? '' }),
    answer: () => ({ redirect: withMessage(BACK, 'msg', 'The category is deleted.') }),
  }),
];
