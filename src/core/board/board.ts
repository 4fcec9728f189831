import type { z } from 'zod';
import type { Ctx } from '../ctx.ts';
import { jsonBytes, jsonText, type JsonPart, type JsonText } from '../json-text.ts';
import { byteRows, intOf, textOf } from '../../db/raw.ts';
import { onCachedPlan, type Db } from '../../db/connect.ts';
import { defineOp } from '../operation.ts';
import { ticketFilterSchema, ticketFilterWhere } from '../tickets/filters.ts';
import { listTicketsSchema } from '../tickets/list.ts';
import type { Fragment, TicketSummary } from '../tickets/summary.ts';
import { boardKeyParts, encodeBoardCursor } from './cursor.ts';
import { boardKey, boardOrder, changeMarkSql, pageRowsSql, summaryPageSql, visibleSql } from './page.ts';
import { remembered } from '../reads/remembered.ts';
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

interface ColumnRow<T> {
  id: string;
  key: string;
  name: string;
  category: 'open' | 'closed';
  mark: string;
  total: number;
  tickets: T;
  shown: number;
  last_key: string | null;
  last_id: string | null;
  /** The read mark of the statement's snapshot (remembered.ts), when asked for. */
  read_mark?: string;
}

/**
 * The board's one statement: a row per workflow state in workflow order (position, then key), with
 * its total, its first page in board order (json, or with `asText` its JSON text's bytes as
 * PostgreSQL sent them) and its last ticket's key; with `markSql`, the read mark of the same snapshot.
 */
async function boardRows<T extends boolean>(
  ctx: Ctx,
  q: z.output<typeof boardQuerySchema>,
  asText: T,
  markSql: Fragment | null = null,
): Promise<ColumnRow<T extends true ? Buffer : TicketSummary[]>[]> {
  const { sql, principal: p } = ctx;
  const limit = q.limit ?? BOARD_LIMIT_MAX;
  const { where: filters } = await ticketFilterWhere(ctx, q);
  const column: Fragment = sql`t.workspace_id = ${p.workspaceId} and t.state_id = s.id and not t.archived and ${filters}`;
  // totals from the counters the database keeps (no count over the column) where the filters allow
  const total = countersAnswer(q) ? countedTotalSql(ctx, q) : sql`(select count(*)::int from tickets t where ${visibleSql(ctx)} and ${column})`;
  const query = (db: Db) => db<ColumnRow<TicketSummary[]>[]>`
    select s.id, s.key, s.name, s.category, ${changeMarkSql(ctx)} as mark,
           ${total} as total,
           ${asText ? sql`c.tickets` : sql`c.tickets::json as tickets`}, c.shown, c.last_key, c.last_id
           ${markSql ? sql`, ${markSql} as read_mark` : sql``}
    from workflow_states s
    cross join lateral ${summaryPageSql(ctx, pageRowsSql(ctx, { where: column, order: boardOrder(ctx), limit }), boardKey(ctx))} c
    where s.workspace_id = ${p.workspaceId}
    order by s.position, s.key`;
  // on its cached plan (db/connect.ts onCachedPlan), but for a text search, whose best plan depends on
  // the words: PostgreSQL's own choice planned a member's board afresh on every call at 1,000,000
  // tickets (2.5 ms each; every fifth call on from the sixth at 100,000), its plan's shape the same
  const run = <R>(fn: (db: Db) => Promise<R>): Promise<R> => (q.q?.trim() ? fn(sql) : onCachedPlan(sql, fn));
  if (!asText) return (await run(query)) as unknown as ColumnRow<T extends true ? Buffer : TicketSummary[]>[];
  const rows = await run((db) => byteRows<keyof ColumnRow<unknown>>(query(db)));
  return rows.map((r): ColumnRow<Buffer> => ({
    id: textOf(r.id)!,
    key: textOf(r.key)!,
    name: textOf(r.name)!,
    category: textOf(r.category) as 'open' | 'closed',
    mark: textOf(r.mark)!,
    total: intOf(r.total)!,
    tickets: r.tickets!,
    shown: intOf(r.shown)!,
    last_key: textOf(r.last_key),
    last_id: textOf(r.last_id),
    read_mark: textOf(r.read_mark) ?? undefined,
  })) as ColumnRow<T extends true ? Buffer : TicketSummary[]>[];
}

/** The column's cursor to its next page: set exactly when the total exceeds the first page. */
function nextCursorOf(r: ColumnRow<unknown>): string | null {
  return r.last_key && r.last_id && r.total > r.shown ? encodeBoardCursor({ ...boardKeyParts(r.last_key), stateId: r.id, mark: r.mark, id: r.last_id }) : null;
}

/** The column's state as the Board shows it. */
const state = (r: ColumnRow<unknown>) => ({ id: r.id, key: r.key, name: r.name, category: r.category });

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
    const rows = await boardRows(ctx, q, false);
    return {
      columns: rows.map((r) => ({ state: state(r), total: r.total, tickets: r.tickets, nextCursor: nextCursorOf(r) })),
    };
  },
});

/** The Board's JSON around the columns' summaries as PostgreSQL wrote them (their bytes, unread). */
function boardText(rows: ColumnRow<Buffer>[]): Buffer {
  const parts: JsonPart[] = ['{"columns":['];
  rows.forEach((r, i) =>
    parts.push(
      `${i ? ',' : ''}{"state":${JSON.stringify(state(r))},"total":${r.total},"tickets":`,
      r.tickets,
      `,"nextCursor":${JSON.stringify(nextCursorOf(r))}}`,
    ),
  );
  parts.push(']}');
  return jsonBytes(parts);
}

/**
 * GET /board as the REST door sends it: the same board as `getBoard`, each column's summaries as
 * the JSON text PostgreSQL wrote, placed in the Board without being parsed (core/json-text.ts).
 * An unchanged board is answered from memory (remembered.ts: keyed by the caller, the query and
 * the workspace's read mark, which every change to what a board shows moves); not with `due`
 * (it depends on the day) or `q`.
 */
export const getBoardJson = defineOp({
  name: 'board.read.json',
  action: 'board.read',
  input: boardQuerySchema,
  output: boardSchema,
  run: async (ctx, q): Promise<JsonText> => {
    if (q.due !== undefined || q.q !== undefined) return jsonText(boardText(await boardRows(ctx, q, true)));
    const text = await remembered(ctx, 'board', q, async (markSql) => {
      const rows = await boardRows(ctx, q, true, markSql);
      return { body: boardText(rows), mark: rows[0]?.read_mark ?? null };
    });
    return jsonText(text);
  },
});
