import type { Ctx } from '../ctx.ts';
import { notFound } from '../errors.ts';
import { ticketFilterWhere } from '../tickets/filters.ts';
import { listTicketsSchema, type TicketList } from '../tickets/list.ts';
import { ticketListSchema } from '../tickets/summary-schema.ts';
import { selectSummaries } from '../tickets/summary.ts';
import { defineOp } from '../operation.ts';
import { idField, withReasons } from '../validation.ts';
import { BOARD_LIMIT_MAX, boardQuerySchema } from './board.ts';
import { boardKeyParts, decodeBoardCursor, encodeBoardCursor, type BoardCursor } from './cursor.ts';
import { boardKey, boardOrder, candidatesSql, changeMarkSql } from './page.ts';

/** GET /board/{stateId} query: the board's filters and limit, plus the column's cursor. */
export const boardColumnQuerySchema = boardQuerySchema.extend({
  cursor: listTicketsSchema.shape.cursor.describe("The column's nextCursor (from GET /board or the previous page of this column)."),
});

/** The column's query with the path's `stateId`. */
const boardColumnInput = withReasons(boardColumnQuerySchema.extend({ stateId: idField('The workflow state (column).') }), { stateId: 'bad_uuid' });

/**
 * GET /board/{stateId}: the next page of one board column, in board order, with the board's
 * filters. A walk over a column is stable while tickets change: its cursor carries the change
 * mark of the walk's first page, and later pages leave out every ticket changed after that mark.
 * So no ticket is returned twice (even one whose priority or state changed meanwhile), and every
 * ticket not changed during the walk is returned exactly once.
 * Errors: 400 `bad_uuid` (stateId), 400 `bad_cursor`, 404 `unknown_state` (no such state in the workspace).
 */
export const getBoardColumn = defineOp({
  name: 'board.column',
  action: 'board.read',
  input: boardColumnInput,
  output: ticketListSchema,
  run: async (ctx, q): Promise<TicketList> => {
    const { sql, principal: p } = ctx;
    const { stateId } = q;
    const after = q.cursor !== undefined ? decodeBoardCursor(q.cursor, stateId) : null;
    const limit = q.limit ?? BOARD_LIMIT_MAX;
    const { where: filters } = await ticketFilterWhere(ctx, q);
    const rows = await selectSummaries(ctx, {
      where: sql`${candidatesSql(ctx)} and t.workspace_id = ${p.workspaceId} and t.state_id = ${stateId}::uuid and not t.archived and ${filters} ${after ? afterSql(ctx, after) : sql``}`,
      order: boardOrder(ctx),
      limit: limit + 1,
      // the mark rides along on every row (an uncorrelated subquery: evaluated once, same snapshot as the page)
      key: sql`${boardKey(ctx)} || ',' || ${after ? sql`${after.mark}::text` : changeMarkSql(ctx)}`,
    });
    if (rows.length === 0) await assertState(ctx, stateId);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    let nextCursor: string | null = null;
    if (rows.length > limit && last) {
      const { priority, at, mark } = boardKeyParts(last.key!);
      nextCursor = encodeBoardCursor({ stateId, mark: mark!, priority, at, id: last.summary.id });
    }
    return { items: page.map((r) => r.summary), nextCursor };
  },
});

/** After the cursor's position in board order, and unchanged since the walk began. */
function afterSql(ctx: Ctx, c: BoardCursor) {
  const { sql } = ctx;
  return sql`and (-t.priority_position, t.updated_at, t.id) < (${-c.priority}::int, ${c.at}::text::timestamp at time zone 'UTC', ${c.id}::uuid)
    and not exists (select 1 from ticket_changes c where c.ticket_id = t.id and c.seq > ${c.mark}::bigint)`;
}

async function assertState(ctx: Ctx, stateId: string): Promise<void> {
  const [row] = await ctx.sql`select 1 from workflow_states where id = ${stateId}::uuid and workspace_id = ${ctx.principal.workspaceId}`;
  if (!row) throw notFound('unknown_state', { stateId }, 'No such workflow state in this workspace.');
}
