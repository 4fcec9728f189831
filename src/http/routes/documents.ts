import { listDocuments, listDocumentsInput } from '../../core/documents/list.ts';
import { coreCtx } from '../context.ts';
import { defineRoute } from '../route-table.ts';

/** Routes for client timesheet documents (issue 6): the list; downloads come with rendering. */
export const documentsRoutes = [
  defineRoute({
    method: 'GET',
    path: '/documents',
    action: 'documents.list',
    input: { query: listDocumentsInput },
    output: null,
    handler: async ({ ctx, deps }) => {
      ctx.body = await listDocuments(coreCtx(deps, ctx), ctx.query);
    },
  }),
];
