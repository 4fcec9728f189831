import { z } from 'zod';
import { defineOp } from '../operation.ts';
import { badCursor, decodeCursor, encodeCursor, isMicrosTimestamp } from '../tickets/cursor.ts';
import { UUID_PATTERN } from '../validation.ts';
import { documentRule } from './access.ts';
import type { DocumentFormat } from './timesheet-model.ts';

export const DOWNLOADABLE_PAGE_MAX = 100;

export const listDownloadableInput = z.object({
  cursor: z.string().max(200).optional(),
  limit: z.int().positive().max(DOWNLOADABLE_PAGE_MAX).default(50),
});

export interface DownloadableDocument {
  id: string;
  number: string;
  format: DocumentFormat;
  clientName: string;
  projectName: string | null;
  periodStart: string;
  version: number;
  bytes: number;
  createdAt: string;
}

/** The cursor kind of this list (src/core/tickets/cursor.ts): (createdAt with microseconds, id), newest first. */
const KIND = 'documents';

function decode(cursor: string): [string, string] {
  const [at, id] = decodeCursor(cursor, KIND, 2) as [string, string];
  if (!isMicrosTimestamp(at) || !UUID_PATTERN.test(id)) throw badCursor();
  return [at, id];
}

/**
 * The documents the caller can download right now (the download rule of `documentRule`, and
 * neither voided nor superseded, with a file), newest first, in pages: the list behind the MCP
 * `resources/list`, where every entry must be readable. GET /documents (listDocuments) shows
 * voided and superseded ones too, with their flags.
 */
export const listDownloadableDocuments = defineOp({
  name: 'documents.resources',
  action: 'documents.list',
  input: listDownloadableInput,
  // MCP's resources/list shapes it; no REST route answers it
  output: null,
  run: async (ctx, q): Promise<{ documents: DownloadableDocument[]; nextCursor: string | null }> => {
    const after = q.cursor ? decode(q.cursor) : null;
    const rule = await documentRule(ctx);
    if (rule.scope === 'none') return { documents: [], nextCursor: null };
    const { sql, principal: p } = ctx;
    const rows = await sql<(DownloadableDocument & { at: string })[]>`
      select d.id, d.number, d.format, c.name as "clientName", pr.name as "projectName",
             to_char(d.period_start, 'YYYY-MM-DD') as "periodStart", d.version, d.bytes,
             to_char(d.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "createdAt",
             to_char(d.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as at
      from documents d
      join clients c on c.id = d.client_id
      left join projects pr on pr.id = d.project_id
      where d.workspace_id = ${p.workspaceId} and ${rule.where} and not d.voided and not d.redacted and d.content is not null
        ${after ? sql`and (d.created_at, d.id) < (${after[0]}::text::timestamp at time zone 'UTC', ${after[1]}::uuid)` : sql``}
      order by d.created_at desc, d.id desc
      limit ${q.limit + 1}`;
    const page = rows.slice(0, q.limit);
    const last = page[page.length - 1];
    return {
      documents: page.map(({ at: _at, ...d }) => d),
      nextCursor: rows.length > q.limit && last ? encodeCursor(KIND, [last.at, last.id]) : null,
    };
  },
});
