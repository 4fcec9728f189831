import { z } from 'zod';
import { getBoard, boardQuerySchema } from '../../core/board/board.ts';
import { boardColumnQuerySchema, getBoardColumn } from '../../core/board/column.ts';
import { getMyWork } from '../../core/board/my.ts';
import { coreCtx } from '../context.ts';
import { defineRoute, opInput } from '../route-table.ts';
import { boardSchema, myWorkSchema } from '../../core/board/schema.ts';
import { ticketListSchema } from '../../core/tickets/summary-schema.ts';

/** Routes for the board and "my work" (issue 4). */
export const boardRoutes = [
  defineRoute({
    method: 'GET',
    path: '/board',
    action: 'board.read',
    input: { query: boardQuerySchema },
    output: boardSchema,
    handler: async ({ ctx, deps }) => {
      ctx.body = await getBoard(coreCtx(deps, ctx), ctx.query);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/board/:stateId',
    action: 'board.read',
    // the core checks the caller before it parses the state id (400 bad_uuid after 401/403)
    input: { params: z.object({ stateId: z.string().describe('A workflow state id (UUID), parsed by the core.') }), query: boardColumnQuerySchema },
    output: ticketListSchema,
    handler: async ({ ctx, deps, params }) => {
      ctx.body = await getBoardColumn(coreCtx(deps, ctx), opInput(ctx.query, params));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/my',
    action: 'mywork.read',
    input: {},
    output: myWorkSchema,
    handler: async ({ ctx, deps }) => {
      ctx.body = await getMyWork(coreCtx(deps, ctx));
    },
  }),
];
