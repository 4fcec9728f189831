import { changesQuery, listChanges } from '../../core/changes/feed.ts';
import { defineRoute } from '../route-table.ts';

/** GET /changes: the commit-ordered change feed for pollers (beyond the contract). */
export const changesRoutes = [
  defineRoute({
    method: 'GET',
    path: '/changes',
    op: listChanges,
    input: { query: changesQuery },
    respond: (ctx, page) => {
      ctx.set('X-Poll-Interval', String(page.pollAfterSeconds));
      ctx.body = page;
    },
  }),
];
