import { z } from 'zod';
import { downloadDocument } from '../../core/documents/download.ts';
import { listDocumentGrants, setDocumentGrant, setDocumentGrantInput } from '../../core/documents/grants.ts';
import { listDocuments, listDocumentsInput } from '../../core/documents/list.ts';
import { coreCtx } from '../context.ts';
import { defineRoute, idParam } from '../route-table.ts';
import { documentGrantsSchema, documentListSchema } from '../../core/documents/list-schema.ts';
import { okSchema } from '../../core/response-schema.ts';
import { fileHeaders } from '../../web/file-headers.ts';

const clientParams = z.object({ id: idParam() });

/** Client timesheet documents: the list, downloads, and (Owner/Admin session) document grants. */
export const documentsRoutes = [
  defineRoute({
    method: 'GET',
    path: '/documents',
    action: 'documents.list',
    input: { query: listDocumentsInput },
    output: documentListSchema,
    handler: async ({ ctx, deps }) => {
      ctx.body = await listDocuments(coreCtx(deps, ctx), ctx.query);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/documents/:id/download',
    action: 'documents.download',
    input: { params: z.object({ id: idParam() }) },
    output: { 200: { file: ['text/html', 'application/pdf', 'text/csv'] } },
    handler: async ({ ctx, deps, params }) => {
      const file = await downloadDocument(coreCtx(deps, ctx), { documentId: params.id });
      // html opens in the browser as it is, named by nothing; csv and pdf are saved as `<number>.<format>`
      ctx.set(fileHeaders({ contentType: file.contentType, disposition: file.disposition, filename: file.disposition === 'inline' ? null : file.filename }));
      ctx.body = file.bytes;
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/clients/:id/document-grants',
    action: 'documents.grants.list',
    input: { params: clientParams },
    output: documentGrantsSchema,
    handler: async ({ ctx, deps, params }) => {
      ctx.body = await listDocumentGrants(coreCtx(deps, ctx), { clientId: params.id });
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/clients/:id/document-grants',
    action: 'documents.grants.set',
    input: { params: clientParams, body: setDocumentGrantInput },
    output: okSchema,
    handler: async ({ ctx, deps, params }) => {
      const body = (ctx.request.body ?? {}) as Record<string, unknown>;
      ctx.body = await setDocumentGrant(coreCtx(deps, ctx), { ...body, clientId: params.id });
    },
  }),
];
