import { z } from 'zod';
import { BOARD_LIMIT_MAX, getBoard } from '../../core/board/board.ts';
import { getBoardColumn } from '../../core/board/column.ts';
import { DUE_SOON_DAYS, getMyWork, MY_LIST_LIMIT } from '../../core/board/my.ts';
import { resolveWorkflowId } from '../../core/resolve/workflow.ts';
import { cursorArg, DEFAULT_PAGE, defined, FILTER_FIELDS, filterArgs, filterQuery, limitArg, type FilterArgs } from '../args.ts';
import { compact, compactTicket, ticketLine, ticketList, ticketListText } from '../shapes.ts';
import { defineTool } from '../tool.ts';

/** Tickets per board column by default: a whole board stays readable. */
export const BOARD_DEFAULT = 10;

const column = z.object({
  state: z.string().describe('State name'),
  stateId: z.string(),
  total: z.number(),
  tickets: z.array(compactTicket),
  nextCursor: z.string().nullable(),
});

export const getBoardTool = defineTool({
  name: 'get_board',
  title: 'Get board',
  description: 'The board: a column per state with its total and first tickets (most urgent, then latest activity). Filters as search_tickets.',
  toolset: 'board',
  op: getBoard,
  idempotent: true,
  input: (s) => z.object({ ...filterArgs(s), limit: limitArg('Tickets per column', BOARD_DEFAULT, BOARD_LIMIT_MAX) }),
  output: z.object({ columns: z.array(column) }),
  fields: FILTER_FIELDS,
  args: async (ctx, a) => defined({ ...(await filterQuery(ctx, a as FilterArgs)), limit: String(a.limit) }),
  result: (board) => ({
    columns: board.columns.map((c) => ({
      state: c.state.name,
      stateId: c.state.id,
      total: c.total,
      tickets: c.tickets.map(compact),
      nextCursor: c.nextCursor,
    })),
  }),
  text: (b) =>
    b.columns
      .map((c) =>
        [`## ${c.state} (${c.total})`, ...c.tickets.map(ticketLine), ...(c.nextCursor ? [`More: state=${c.stateId} cursor=${c.nextCursor}`] : [])].join('\n'),
      )
      .join('\n'),
});

export const getBoardColumnTool = defineTool({
  name: 'get_board_column',
  title: 'Get board column',
  description: "The next tickets of one board column: pass the column's nextCursor from get_board and the same filters.",
  toolset: 'board',
  op: getBoardColumn,
  idempotent: true,
  input: (s) =>
    z.object({
      state: z.string().describe('State: id, key or name.'),
      ...filterArgs(s),
      cursor: cursorArg,
      limit: limitArg('Page size', DEFAULT_PAGE, BOARD_LIMIT_MAX),
    }),
  output: ticketList,
  fields: { ...FILTER_FIELDS, stateId: 'state' },
  args: async (ctx, a) => {
    const [stateId, filters] = await Promise.all([resolveWorkflowId(ctx, 'states', a.state, 'state'), filterQuery(ctx, a as FilterArgs)]);
    return defined({ ...filters, stateId, cursor: a.cursor, limit: String(a.limit) });
  },
  result: (page) => ({ items: page.items.map(compact), nextCursor: page.nextCursor }),
  text: ticketListText,
});

const MY_LISTS = ['assigned', 'reported', 'watching', 'dueSoon'] as const;

export const getMyWorkTool = defineTool({
  name: 'get_my_work',
  title: 'Get my work',
  description: `Your lists: assigned (open), reported, watching (you are a viewer), dueSoon (open, overdue or due within ${DUE_SOON_DAYS} days).`,
  toolset: 'board',
  op: getMyWork,
  idempotent: true,
  input: () => z.object({ limit: limitArg('Tickets per list', DEFAULT_PAGE, MY_LIST_LIMIT) }),
  output: z.object(Object.fromEntries(MY_LISTS.map((k) => [k, z.array(compactTicket)])) as Record<(typeof MY_LISTS)[number], z.ZodArray<typeof compactTicket>>),
  args: (_ctx, a) => ({ limit: a.limit }),
  result: (my) => Object.fromEntries(MY_LISTS.map((k) => [k, my[k].map(compact)])) as Record<(typeof MY_LISTS)[number], z.input<typeof compactTicket>[]>,
  text: (my) => MY_LISTS.map((k) => [`## ${k}`, ...(my[k].length ? my[k].map(ticketLine) : ['None.'])].join('\n')).join('\n'),
});
