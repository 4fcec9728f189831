import { z } from 'zod';
import { visibleTicket } from '../access/visible.ts';
import { defineOp } from '../operation.ts';
import { humanId } from '../tickets/ref.ts';
import { codehostColumns, presentCodehost, type CodehostRow, type WorkspaceCodehostLink } from './present.ts';
import { codehostLinkListSchema } from './schema.ts';

export type { WorkspaceCodehostLink } from './present.ts';

/** GET /codehost/links returns at most this many references. */
export const CODEHOST_LIST_LIMIT = 500;

/** Every code-host reference on tickets the caller may see, newest first, at most 500. One query. */
export const listCodehostLinks = defineOp({
  name: 'codehost.list',
  action: 'codehost.list',
  input: z.object({}),
  output: codehostLinkListSchema,
  run: async (ctx): Promise<{ links: WorkspaceCodehostLink[] }> => {
    const { sql, principal: p } = ctx;
    const rows = await sql<(CodehostRow & { ticketId: string; projectKey: string | null; number: number; title: string })[]>`
    select ${codehostColumns(sql, 'c')}, t.id as "ticketId", pr.key as "projectKey", t.number, t.title
    from codehost_links c
    join tickets t on t.id = c.ticket_id
    left join projects pr on pr.id = t.project_id
    where c.workspace_id = ${p.workspaceId} and ${visibleTicket(sql, p)}
    order by c.created_at desc, c.id desc
    limit ${CODEHOST_LIST_LIMIT}`;
    return {
      links: rows.map((r) => ({ ...presentCodehost(r), ticket: { id: r.ticketId, humanId: humanId(r.projectKey, r.number), title: r.title } })),
    };
  },
});
