import { z } from 'zod';
import { defineOp } from '../operation.ts';
import { documentRule } from './access.ts';
import { documentListSchema, type DocumentList, type TimesheetDocument } from './list-schema.ts';

export const listDocumentsInput = z.object({
  clientId: z.uuid().optional().describe('Only documents of this billing client (uuid).'),
  runId: z.uuid().optional().describe('Only documents of this billing run (uuid).'),
});

export type { DocumentDelivery, DocumentList, TimesheetDocument } from './list-schema.ts';

/**
 * GET /documents: the documents the caller may download (see `documentRule`), newest first,
 * voided and superseded ones included with their flags. `clientId` and `runId` only filter:
 * an unknown id yields an empty list. Nothing to download is an empty list with scope `none`.
 */
export const listDocuments = defineOp({
  name: 'documents.list',
  action: 'documents.list',
  input: listDocumentsInput,
  output: documentListSchema,
  run: async (ctx, q): Promise<DocumentList> => {
    const rule = await documentRule(ctx);
    if (rule.scope === 'none') return { documents: [], scope: 'none' };
    const { sql, principal: p } = ctx;
    const iso = (col: ReturnType<typeof sql>) => sql`to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
    const documents = await sql<TimesheetDocument[]>`
      select d.id, d.run_id as "runId", d.number, d.scope, d.project_id as "projectId", pr.name as "projectName",
             d.client_id as "clientId", c.name as "clientName", to_char(d.period_start, 'YYYY-MM-DD') as "periodStart",
             d.format, d.version, d.locale, d.checksum, d.bytes, d.voided, d.redacted, ${iso(sql`d.created_at`)} as "createdAt",
             coalesce((select json_agg(json_build_object('id', dd.id, 'kind', dd.kind, 'email', dd.email, 'state', dd.state, 'detail', dd.detail,
                                                         'attemptedAt', ${iso(sql`dd.attempted_at`)}) order by dd.created_at, dd.id)
                       from document_deliveries dd where dd.timesheet_id = d.timesheet_id), '[]'::json) as deliveries
      from documents d
      join clients c on c.id = d.client_id
      left join projects pr on pr.id = d.project_id
      where d.workspace_id = ${p.workspaceId} and ${rule.where}
        ${q.clientId ? sql`and d.client_id = ${q.clientId.toLowerCase()}::uuid` : sql``}
        ${q.runId ? sql`and d.run_id = ${q.runId.toLowerCase()}::uuid` : sql``}
      order by d.created_at desc, d.number, d.format, d.version desc, d.id`;
    return { documents: [...documents], scope: rule.scope };
  },
});
