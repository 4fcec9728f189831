import { z } from 'zod';
import { downloadDocument } from '../../core/documents/download.ts';
import { listDocumentGrants, setDocumentGrant, setDocumentGrantInput } from '../../core/documents/grants.ts';
import { listDocuments, listDocumentsInput } from '../../core/documents/list.ts';
import { defineRoute, idParam } from '../route-table.ts';
import { fileHeaders } from '../../web/file-headers.ts';

const byId = z.object({ id: idParam() });

/** Client timesheet documents: the list, downloads, and (Owner/Admin session) document grants. */
export const documentsRoutes = [
  defineRoute({ method: 'GET', path: '/documents', op: listDocuments, input: { query: listDocumentsInput } }),
  defineRoute({
    method: 'GET',
    path: '/documents/:id/download',
    op: downloadDocument,
    input: { params: byId },
    output: { 200: { file: ['text/html', 'application/pdf', 'text/csv'] } },
    respond: (ctx, file) => {
      // html opens in the browser as it is, named by nothing; csv and pdf are saved as `<number>.<format>`
      ctx.set(fileHeaders({ contentType: file.contentType, disposition: file.disposition, filename: file.disposition === 'inline' ? null : file.filename }));
      ctx.body = file.bytes;
    },
  }),
  defineRoute({ method: 'GET', path: '/clients/:id/document-grants', op: listDocumentGrants, input: { params: byId } }),
  defineRoute({ method: 'PUT', path: '/clients/:id/document-grants', op: setDocumentGrant, input: { params: byId, body: setDocumentGrantInput } }),
];
