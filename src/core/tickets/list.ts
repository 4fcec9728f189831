import { z } from 'zod';
import { defineOp } from '../operation.ts';
import { decodeUpdatedCursor, encodeUpdatedCursor } from './cursor.ts';
import { ticketFilterSchema, ticketFilterWhere } from './filters.ts';
import { ticketListSchema } from './summary-schema.ts';
import type { Ctx } from '../ctx.ts';
import { jsonArrayParts, jsonBytes, jsonText, type JsonText } from '../json-text.ts';
import { remembered } from '../reads/remembered.ts';
import { selectSummaries, type Fragment, type SummaryTextRow, type TicketList } from './summary.ts';

export type { TicketList } from './summary.ts';

export const LIST_LIMIT_MAX = 50;

export const listTicketsSchema = ticketFilterSchema.extend({
  archived: z
    .union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')])
    .optional()
    .describe('true: archived tickets only. Otherwise (false, the default) archived tickets are left out.'),
  cursor: z.string().max(200).optional().describe('The nextCursor of the previous page, to read the next one.'),
  limit: z
    .union([
      // bounded as the pipe below is, so the published schema (OpenAPI, MCP) says what is refused
      z.number().int().min(1).max(LIST_LIMIT_MAX),
      z
        .string()
        .regex(/^\d{1,3}$/, 'Expected an integer.')
        .transform(Number),
    ])
    .pipe(z.number().int().min(1).max(LIST_LIMIT_MAX))
    .optional()
    .describe(`Page size, 1 to ${LIST_LIMIT_MAX} (default ${LIST_LIMIT_MAX}).`),
});

type ListInput = z.output<typeof listTicketsSchema>;

/**
 * The page's rows, each summary as JSON text (one more than `limit`, to know whether a next page
 * exists) and its size; with `mark`, each row carries the read mark of the statement's snapshot.
 */
async function listRows(ctx: Ctx, q: ListInput, mark: Fragment | null = null) {
  const { sql } = ctx;
  const after = q.cursor !== undefined ? decodeUpdatedCursor(q.cursor) : null;
  const limit = q.limit ?? LIST_LIMIT_MAX;
  const { where: filters } = await ticketFilterWhere(ctx, q);
  const rows = await selectSummaries(ctx, {
    where: sql`${filters}
      and ${q.archived ? sql`t.archived` : sql`not t.archived`}
      ${after ? sql`and (t.updated_at, t.id) < (${after.at}::text::timestamp at time zone 'UTC', ${after.id}::uuid)` : sql``}`,
    order: sql`t.updated_at desc, t.id desc`,
    limit: limit + 1,
    key: sql`to_char(t.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US')`,
    customPlan: Boolean(q.q?.trim()),
    asText: true,
    mark,
  });
  return { rows, limit };
}

const nextCursorOf = (rows: { key: string | null }[], limit: number, lastId: string | undefined): string | null =>
  rows.length > limit && lastId ? encodeUpdatedCursor({ at: rows[limit - 1]!.key!, id: lastId }) : null;

/** The TicketList of text rows: the summaries' JSON bytes joined without being read (core/json-text.ts). */
function listText(rows: SummaryTextRow[], limit: number): Buffer {
  const page = rows.slice(0, limit);
  const items = jsonArrayParts(page.map((r) => r.summary));
  return jsonBytes(['{"items":', ...items, `,"nextCursor":${JSON.stringify(nextCursorOf(rows, limit, page.at(-1)?.id))}}`]);
}

/**
 * The page as JSON bytes, its summaries as the JSON text PostgreSQL wrote, joined without being
 * parsed (core/json-text.ts). A first page nothing it shows has changed on is answered from memory
 * (reads/remembered.ts: keyed by the caller, the query and the workspace's read mark), as the board
 * is: a poller asking again for an unchanged first page costs one small statement, through every
 * door. Not a page after a cursor (read once per walk through the list, each would only push first
 * pages and boards out of the process's memory, as the board's column pages), nor with `due` (it
 * depends on the day) or `q` (searches are many and seldom repeated), nor an empty page (no row to
 * carry the mark).
 */
async function listBytes(ctx: Ctx, q: ListInput): Promise<Buffer> {
  if (q.due !== undefined || q.q?.trim() || q.cursor !== undefined) {
    const { rows, limit } = await listRows(ctx, q);
    return listText(rows, limit);
  }
  return remembered(ctx, 'tickets', q, async (markSql) => {
    const { rows, limit } = await listRows(ctx, q, markSql);
    return { body: listText(rows, limit), mark: rows[0]?.read_mark ?? null };
  });
}

/**
 * GET /tickets: the visible tickets matching the filters, most recently updated first
 * (updatedAt desc, id desc), one keyset page per call. A poller pages with `cursor` until it
 * reaches the updatedAt it already processed. The page of `listBytes`, read: what the MCP door
 * compacts (an unchanged first page from memory there too; before, only the REST door's was).
 */
export const listTickets = defineOp({
  name: 'tickets.list',
  action: 'tickets.list',
  input: listTicketsSchema,
  output: ticketListSchema,
  run: async (ctx, q): Promise<TicketList> => JSON.parse((await listBytes(ctx, q)).toString('utf8')) as TicketList,
});

/** GET /tickets as the REST door sends it: the same page as `listTickets`, as the bytes `listBytes` joined. */
export const listTicketsJson = defineOp({
  name: 'tickets.list.json',
  action: 'tickets.list',
  input: listTicketsSchema,
  output: ticketListSchema,
  run: async (ctx, q): Promise<JsonText> => jsonText(await listBytes(ctx, q)),
});
