import { defineOp } from '../operation.ts';
import { ticketFilterSchema, ticketFilterWhere } from '../tickets/filters.ts';
import { listTicketsSchema } from '../tickets/list.ts';
import type { Fragment, TicketSummary } from '../tickets/summary.ts';
import { boardKeyParts, encodeBoardCursor } from './cursor.ts';
import { boardKey, boardOrder, changeMarkSql, pageRowsSql, summaryArraySql, visibleSql } from './page.ts';
import { boardSchema, type Board } from './schema.ts';
import { countedTotalSql, countersAnswer } from './totals.ts';

export const BOARD_LIMIT_MAX = 50;

/**
 * GET /board query: every filter of GET /tickets and a per-column `limit`. `cursor` (and
 * `archived`) are not board parameters: unknown parameters are ignored, and archived tickets
 * are never on a board.
 */
export const boardQuerySchema = ticketFilterSchema.extend({
  limit: listTicketsSchema.shape.limit.describe(`Tickets per column, 1 to ${BOARD_LIMIT_MAX} (default ${BOARD_LIMIT_MAX}).`),
});

interface ColumnRow {
  id: string;
  key: string;
  name: string;
  category: 'open' | 'closed';
  mark: string;
  total: number;
  tickets: { summary: TicketSummary; key: string }[];
}

/**
 * GET /board: one column per workflow state in workflow order (position, then key), each with
 * its total and first page in board order (priority position, updatedAt desc, id desc). A state
 * the filters exclude still has its column, empty with total 0. One statement for the whole
 * board, so totals, pages and the cursors' change mark come from one snapshot.
 */
export const getBoard = defineOp({
  name: 'board.read',
  action: 'board.read',
  input: boardQuerySchema,
  output: boardSchema,
  run: async (ctx, q): Promise<Board> => {
    const { sql, principal: p } = ctx;
    const limit = q.limit ?? BOARD_LIMIT_MAX;
    const { where: filters } = await ticketFilterWhere(ctx, q);
    const column: Fragment = sql`t.workspace_id = ${p.workspaceId} and t.state_id = s.id and not t.archived and ${filters}`;
    // totals from the counters the database keeps (no count over the column) where the filters allow
    const total = countersAnswer(q) ? countedTotalSql(ctx, q) : sql`(select count(*)::int from tickets t where ${visibleSql(ctx)} and ${column})`;
    const rows = await sql<ColumnRow[]>`
    select s.id, s.key, s.name, s.category, ${changeMarkSql(ctx)} as mark,
           ${total} as total,
           ${summaryArraySql(ctx, pageRowsSql(ctx, { where: column, order: boardOrder(ctx), limit }), boardKey(ctx))} as tickets
    from workflow_states s
    where s.workspace_id = ${p.workspaceId}
    order by s.position, s.key`;
    return {
      columns: rows.map((r) => {
        const last = r.tickets.at(-1);
        return {
          state: { id: r.id, key: r.key, name: r.name, category: r.category },
          total: r.total,
          tickets: r.tickets.map((x) => x.summary),
          nextCursor:
            last && r.total > r.tickets.length ? encodeBoardCursor({ ...boardKeyParts(last.key), stateId: r.id, mark: r.mark, id: last.summary.id }) : null,
        };
      }),
    };
  },
});
