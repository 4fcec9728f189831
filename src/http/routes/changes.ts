import { changesQuery, listChanges } from '../../core/changes/feed.ts';
import { coreCtx } from '../context.ts';
import { defineRoute } from '../route-table.ts';
import { changePageSchema } from '../../core/changes/schema.ts';

/** GET /changes: the commit-ordered change feed for pollers (beyond the contract). */
export const changesRoutes = [
  defineRoute({
    method: 'GET',
    path: '/changes',
    action: 'changes.list',
    input: { query: changesQuery },
    output: changePageSchema,
    handler: async ({ ctx, deps }) => {
      const page = await listChanges(coreCtx(deps, ctx), ctx.query);
      ctx.set('X-Poll-Interval', String(page.pollAfterSeconds));
      ctx.body = page;
    },
  }),
];
