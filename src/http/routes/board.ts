import { z } from 'zod';
import { getBoardJson, boardQuerySchema } from '../../core/board/board.ts';
import { boardColumnQuerySchema, getBoardColumn } from '../../core/board/column.ts';
import { getMyWorkJson } from '../../core/board/my.ts';
import { defineRoute } from '../route-table.ts';

/** Routes for the board and "my work" (issue 4). */
export const boardRoutes = [
  // the JSON forms send the summaries as the text PostgreSQL wrote (same answers as getBoard, getMyWork)
  defineRoute({ method: 'GET', path: '/board', op: getBoardJson, input: { query: boardQuerySchema } }),
  defineRoute({
    method: 'GET',
    path: '/board/:stateId',
    op: getBoardColumn,
    // the core checks the caller before it parses the state id (400 bad_uuid after 401/403)
    input: { params: z.object({ stateId: z.string().describe('A workflow state id (UUID), parsed by the core.') }), query: boardColumnQuerySchema },
  }),
  // REST shows every list whole: the assistant's `limit` is not a query parameter here
  defineRoute({ method: 'GET', path: '/my', op: getMyWorkJson, input: {}, sent: () => ({}) }),
];
