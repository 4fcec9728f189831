import type { ListResourcesResult, ReadResourceResult, Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { can } from '../core/access/authorize.ts';
import type { Ctx } from '../core/ctx.ts';
import { downloadDocument } from '../core/documents/download.ts';
import { listDownloadableDocuments } from '../core/documents/resources.ts';
import { CONTENT_TYPES } from '../core/documents/timesheet-model.ts';
import type { AppError } from '../core/errors.ts';
import { toAppError } from '../core/failures.ts';
import { runOp } from '../core/operation.ts';
import { readTicketDetail } from './tools/tickets-read.ts';
import { ProtocolError } from './wire.ts';

/**
 * MCP resources: every document the caller may download now (`worktracker://documents/{id}`,
 * html and csv as text, pdf as a blob), listed in pages and read under the download rule of
 * GET /documents/{id}/download; and tickets (`worktracker://tickets/{humanId}`, the get_ticket
 * page as JSON), reached through a resource template (a workspace's tickets are too many to list:
 * search_tickets finds them).
 */

const DOCUMENTS = 'worktracker://documents/';
const TICKETS = 'worktracker://tickets/';
/** The MCP specification's error for a resource that does not exist (or that the caller may not know of). */
export const RESOURCE_NOT_FOUND = -32002;
/** Documents per resources/list page. */
export const RESOURCE_PAGE = 50;

export const documentUri = (id: string) => `${DOCUMENTS}${id}`;
export const ticketUri = (humanId: string) => `${TICKETS}${humanId}`;

export const resourceTemplates: ResourceTemplate[] = [
  {
    uriTemplate: `${TICKETS}{humanId}`,
    name: 'ticket',
    title: 'Ticket',
    description: 'A ticket as get_ticket shows it, as JSON: humanId like WEB-12 (or the ticket id).',
    mimeType: 'application/json',
  },
  {
    uriTemplate: `${DOCUMENTS}{id}`,
    name: 'document',
    title: 'Timesheet document',
    description: 'A client timesheet document by id (list_documents): html and csv as text, pdf as a base64 blob.',
  },
];

/** resources/list: a page of the documents the caller can download (none without the documents action). */
export async function listResources(ctx: Ctx, cursor: string | undefined): Promise<ListResourcesResult> {
  if (can(ctx.principal, 'documents.list')) return { resources: [] };
  let page;
  try {
    page = await runOp(listDownloadableDocuments, ctx, { ...(cursor === undefined ? {} : { cursor }), limit: RESOURCE_PAGE });
  } catch (err) {
    const e = toAppError(err);
    if (e && e.status < 500) throw new ProtocolError(ErrorCode.InvalidParams, e.message, { code: e.code, reason: e.reason ?? null });
    throw err;
  }
  const resources = page.documents.map((d): Resource => ({
    uri: documentUri(d.id),
    name: `${d.number}.${d.format}`,
    title: `Timesheet ${d.number} (${d.clientName}${d.projectName ? `, ${d.projectName}` : ''}, ${d.periodStart})`,
    mimeType: CONTENT_TYPES[d.format],
    size: d.bytes,
  }));
  return { resources, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
}

/**
 * A refusal while reading: a resource the caller may not have, or that does not exist, is the
 * same -32002 "Resource not found" (the download rule's 403s tell nothing more than a 404 does);
 * a readable document in a state that has no file (voided, superseded) says why, with the REST
 * code and reason (and `currentId` of a superseded one).
 */
function refusal(uri: string, e?: AppError): ProtocolError {
  const shown = uri.slice(0, 200);
  if (e?.status === 409) return new ProtocolError(RESOURCE_NOT_FOUND, e.message, { uri: shown, code: e.code, reason: e.reason ?? null, ...e.details });
  return new ProtocolError(RESOURCE_NOT_FOUND, `Resource not found: ${shown}`, { uri: shown });
}

/** The id or human id after a URI's prefix; a malformed escape names nothing. */
function tail(uri: string, prefix: string): string {
  try {
    return decodeURIComponent(uri.slice(prefix.length));
  } catch {
    throw refusal(uri);
  }
}

/** resources/read of one document or ticket, under the same rules as get_document and get_ticket. */
export async function readResource(ctx: Ctx, uri: string): Promise<ReadResourceResult> {
  try {
    if (uri.startsWith(DOCUMENTS)) {
      if (can(ctx.principal, 'documents.download')) throw refusal(uri);
      const file = await runOp(downloadDocument, ctx, { id: tail(uri, DOCUMENTS) });
      const content = file.format === 'pdf' ? { blob: file.bytes.toString('base64') } : { text: file.bytes.toString('utf8') };
      return { contents: [{ uri, mimeType: file.contentType, ...content }] };
    }
    if (uri.startsWith(TICKETS)) {
      if (can(ctx.principal, 'tickets.read')) throw refusal(uri);
      const ticket = await readTicketDetail(ctx, tail(uri, TICKETS));
      return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(ticket) }] };
    }
  } catch (err) {
    if (err instanceof ProtocolError) throw err;
    const e = toAppError(err);
    if (e && e.status < 500) throw refusal(uri, e);
    throw err;
  }
  throw refusal(uri);
}
