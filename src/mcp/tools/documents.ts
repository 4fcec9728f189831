import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { getBankBalances } from '../../core/banks/balances.ts';
import { downloadDocument, type DocumentDownload, type DocumentFields } from '../../core/documents/download.ts';
import { listDocuments } from '../../core/documents/list.ts';
import { CONTENT_TYPES } from '../../core/documents/timesheet-model.ts';
import { resolveClientId } from '../../core/resolve/projects.ts';
import type { Ctx } from '../../core/ctx.ts';
import { defined } from '../args.ts';
import { documentUri } from '../resources.ts';
import { lines } from '../shapes.ts';
import { defineTool } from '../tool.ts';

const clientArg = z.string().describe('Client: id, code or name.');

const clientFilter = (ctx: Ctx, value: string | undefined) => (value === undefined ? undefined : resolveClientId(ctx, value, 'client'));

const documentFields = z.object({
  id: z.string(),
  number: z.string(),
  runId: z.string(),
  scope: z.enum(['combined', 'project']),
  client: z.string(),
  project: z.string().nullable(),
  periodStart: z.string(),
  format: z.enum(['html', 'pdf', 'csv']),
  version: z.number(),
  bytes: z.number(),
  voided: z.boolean(),
  redacted: z.boolean().describe('Superseded by a newer version'),
  createdAt: z.string(),
});
const document = documentFields.extend({ deliveries: z.array(z.object({ email: z.string().nullable(), state: z.string() })) });
const documentList = z.object({ scope: z.enum(['all', 'client', 'projects', 'none']), documents: z.array(document) });

type ShownDocument = z.output<typeof documentFields>;

/** One document in a line: number, format, whose, which period, and whether it can be read. */
const documentLine = (d: ShownDocument) =>
  `${d.number}.${d.format} v${d.version} ${d.client}${d.project ? ` / ${d.project}` : ''} ${d.periodStart} [${d.id}]${d.voided ? ' voided' : ''}${d.redacted ? ' superseded' : ''}`;

/** The `resource_link` to a document's MCP resource (resources/read answers it under the download rule). */
const documentLink = (d: ShownDocument): CallToolResult['content'][number] => ({
  type: 'resource_link',
  uri: documentUri(d.id),
  name: `${d.number}.${d.format}`,
  title: `Timesheet ${d.number} (${d.client}${d.project ? `, ${d.project}` : ''}, ${d.periodStart})`,
  mimeType: CONTENT_TYPES[d.format],
  size: d.bytes,
});

/** A document's fields as the tools show them: client and project by name. */
function compactDocument(d: DocumentFields): z.input<typeof documentFields> {
  return {
    id: d.id,
    number: d.number,
    runId: d.runId,
    scope: d.scope,
    client: d.clientName,
    project: d.projectName,
    periodStart: d.periodStart,
    format: d.format,
    version: d.version,
    bytes: d.bytes,
    voided: d.voided,
    redacted: d.redacted,
    createdAt: d.createdAt,
  };
}

export const listDocumentsTool = defineTool({
  name: 'list_documents',
  title: 'List documents',
  description:
    'Client timesheet documents you may download, newest first. scope is the widest rule you hold: all, client, projects, or none (then the list is empty).',
  toolset: 'documents',
  op: listDocuments,
  idempotent: true,
  input: () => z.object({ client: clientArg.optional(), runId: z.string().optional().describe('Billing run id.') }),
  output: documentList,
  fields: { clientId: 'client' },
  args: async (ctx, a) => defined({ clientId: await clientFilter(ctx, a.client), runId: a.runId }),
  result: (list) => ({
    scope: list.scope,
    documents: list.documents.map((d) => ({ ...compactDocument(d), deliveries: d.deliveries.map(({ email, state }) => ({ email, state })) })),
  }),
  content: (_result, out) => {
    const list = out as z.output<typeof documentList>;
    const text = [`scope: ${list.scope}`, lines(list.documents, documentLine, 'No documents.')].join('\n');
    // a link per document that can be read now: voided and superseded ones are refused
    const links = list.documents.filter((d) => !d.voided && !d.redacted).map(documentLink);
    return [{ type: 'text', text }, ...links];
  },
});

/**
 * The content of get_document: a line about the document, the file (html and csv as text, a pdf
 * as an embedded resource blob, base64), then the `resource_link` to its MCP resource.
 */
function documentContent(result: Record<string, unknown>, out: Record<string, unknown>): CallToolResult['content'] {
  const file = result.file as DocumentDownload;
  const shown = out as ShownDocument;
  const body: CallToolResult['content'][number] =
    file.format === 'pdf'
      ? { type: 'resource', resource: { uri: documentUri(file.document.id), mimeType: file.contentType, blob: file.bytes.toString('base64') } }
      : { type: 'text', text: file.bytes.toString('utf8') };
  return [{ type: 'text', text: `${documentLine(shown)}, ${shown.bytes} bytes` }, body, documentLink(shown)];
}

export const getDocumentTool = defineTool({
  name: 'get_document',
  title: 'Get document',
  description: 'One document of list_documents with its file: html and csv as text, pdf as a base64 resource. Voided and redacted ones are refused.',
  toolset: 'documents',
  op: downloadDocument,
  idempotent: true,
  input: () => z.object({ id: z.string().describe('Document id.') }),
  output: documentFields,
  args: (_ctx, a) => ({ id: a.id }),
  // the file rides along for `content` (the output schema drops it from the structured content)
  result: (file) => ({ ...compactDocument(file.document), file }),
  content: documentContent,
});

export const getBankBalancesTool = defineTool({
  name: 'get_bank_balances',
  title: 'Get bank balances',
  description:
    "Prepaid time banks: deposited, consumed (billed) and remaining minutes. Owner/admin: all; project managers: their projects' clients; billing contacts: their client.",
  toolset: 'documents',
  op: getBankBalances,
  idempotent: true,
  input: () => z.object({ client: clientArg.optional() }),
  output: z.object({
    banks: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        clientId: z.string(),
        clientName: z.string(),
        depositedMinutes: z.number(),
        consumedMinutes: z.number(),
        remainingMinutes: z.number(),
      }),
    ),
  }),
  fields: { clientId: 'client' },
  args: async (ctx, a) => defined({ clientId: await clientFilter(ctx, a.client) }),
  text: (b) =>
    lines(
      b.banks,
      (x) => `${x.clientName} / ${x.name}: ${x.remainingMinutes} min left (deposited ${x.depositedMinutes}, consumed ${x.consumedMinutes})`,
      'No banks.',
    ),
});
