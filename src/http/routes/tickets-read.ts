import { z } from 'zod';
import { readTicketPage } from '../../core/tickets/get.ts';
import { listTickets, listTicketsSchema } from '../../core/tickets/list.ts';
import { coreCtx } from '../context.ts';
import { defineRoute, ticketRefParam } from '../route-table.ts';
import { ticketListSchema } from '../../core/tickets/summary-schema.ts';
import { ticketPageSchema } from '../../core/tickets/page-schema.ts';

/** Routes for GET /tickets and GET /tickets/:ref (issue 3). */
export const ticketsReadRoutes = [
  defineRoute({
    method: 'GET',
    path: '/tickets',
    action: 'tickets.list',
    input: { query: listTicketsSchema },
    output: ticketListSchema,
    handler: async ({ ctx, deps }) => {
      ctx.body = await listTickets(coreCtx(deps, ctx), ctx.query);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/tickets/:ref',
    action: 'tickets.read',
    input: { params: z.object({ ref: ticketRefParam }) },
    output: { 200: ticketPageSchema, 304: null },
    handler: async ({ ctx, deps, params }) => {
      const res = await readTicketPage(coreCtx(deps, ctx), { ref: params.ref, ifNoneMatch: ctx.get('if-none-match') || null });
      ctx.set('ETag', res.etag);
      if (res.status === 304) {
        ctx.status = 304;
        return;
      }
      ctx.body = res.page;
    },
  }),
];
