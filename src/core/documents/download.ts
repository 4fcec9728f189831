import { z } from 'zod';
import type { Ctx } from '../ctx.ts';
import { conflict, forbidden, notFound } from '../errors.ts';
import { defineOp } from '../operation.ts';
import { idField, withReasons } from '../validation.ts';
import { documentRule } from './access.ts';
import type { TimesheetDocument } from './list-schema.ts';
import { CONTENT_TYPES, type DocumentFormat } from './timesheet-model.ts';

/** A document's fields as GET /documents lists them, without its deliveries. */
export type DocumentFields = Omit<TimesheetDocument, 'deliveries'>;

export interface DocumentDownload {
  bytes: Buffer;
  contentType: string;
  /** `<number>.<format>`. */
  filename: string;
  /** html opens in the browser (under a sandboxing CSP); csv and pdf are saved. */
  disposition: 'inline' | 'attachment';
  format: DocumentFormat;
  document: DocumentFields;
}

const downloadDocumentInput = withReasons(z.object({ id: idField('The document (uuid).') }), { id: 'bad_uuid' });

interface Row extends DocumentFields {
  timesheetId: string;
  allowed: boolean;
  /** Read only once the caller may have it; null also when the file is not available. */
  content: Buffer | null;
}

/**
 * GET /documents/{id}/download, under the download rule of `documentRule` (the same as the list):
 * - a caller who may download nothing: 403 `no_document_access`;
 * - an id unknown in this workspace: 404 `unknown_document`;
 * - a document outside the rule: 403 `document_forbidden`, or `combined_document_forbidden` for a
 *   token restricted to projects asking for a combined one (the contract names that case);
 * - voided: 409 `document_voided`; superseded by a redaction: 409 `document_redacted`, with
 *   `currentId` (the same format of the newest version) once that version is rendered;
 * - no file stored: 404 `file_unavailable`.
 * Refusals come before any state so that a caller learns nothing about a document they may not have.
 */
export const downloadDocument = defineOp({
  name: 'documents.download',
  action: 'documents.download',
  input: downloadDocumentInput,
  // a file, not JSON: each door shapes it (REST's headers, MCP's content blocks)
  output: null,
  run: async (ctx, { id }): Promise<DocumentDownload> => {
    const rule = await documentRule(ctx);
    if (rule.scope === 'none') throw forbidden('no_document_access', undefined, 'You may not download any document.');
    const { sql, principal: p } = ctx;
    const [d] = await sql<Row[]>`
      select d.id, d.run_id as "runId", d.number, d.scope, d.project_id as "projectId", pr.name as "projectName",
             d.client_id as "clientId", c.name as "clientName", to_char(d.period_start, 'YYYY-MM-DD') as "periodStart",
             d.format, d.version, d.locale, d.checksum, d.bytes, d.voided, d.redacted,
             to_char(d.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "createdAt",
             d.timesheet_id as "timesheetId", ${rule.where} as allowed,
             case when ${rule.where} and not d.voided and not d.redacted then d.content end as content
      from documents d
      join clients c on c.id = d.client_id
      left join projects pr on pr.id = d.project_id
      where d.id = ${id} and d.workspace_id = ${p.workspaceId}`;
    if (!d) throw notFound('unknown_document', undefined, 'No such document.');
    if (!d.allowed) {
      if (p.projectIds && d.scope === 'combined') {
        throw forbidden('combined_document_forbidden', undefined, 'A token restricted to projects may download only project documents.');
      }
      throw forbidden('document_forbidden', undefined, 'You may not download this document.');
    }
    if (d.voided) throw conflict('document_voided', undefined, 'This document was voided with its billing run.');
    if (d.redacted) {
      const currentId = await currentVersionId(ctx, d.timesheetId, d.format);
      throw conflict('document_redacted', currentId ? { currentId } : undefined, 'A redaction superseded this document; fetch the current version.');
    }
    if (!d.content) throw notFound('file_unavailable', undefined, 'The file of this document is not available.');
    const { timesheetId: _sheet, allowed: _allowed, content, ...document } = d;
    const filename = `${d.number}.${d.format}`;
    const inline = d.format === 'html';
    return {
      bytes: content,
      contentType: CONTENT_TYPES[d.format],
      filename,
      disposition: inline ? 'inline' : 'attachment',
      format: d.format,
      document,
    };
  },
});

/**
 * The document in `format` of the newest version that superseded timesheet `sheetId` (following
 * `supersedes_id` forward), or null while that version is not rendered yet.
 */
async function currentVersionId(ctx: Ctx, sheetId: string, format: DocumentFormat): Promise<string | null> {
  const [row] = await ctx.sql<{ id: string }[]>`
    with recursive newer (id, version) as (
      select s.id, s.version from timesheets s where s.supersedes_id = ${sheetId}
      union all
      select s.id, s.version from timesheets s join newer n on s.supersedes_id = n.id
    )
    select d.id from newer n join documents d on d.timesheet_id = n.id
    where d.format = ${format} and not d.redacted
    order by n.version desc limit 1`;
  return row?.id ?? null;
}
