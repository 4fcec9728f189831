import { z } from 'zod';
import { readTicketPageJson } from '../../core/tickets/read.ts';
import { listTicketsJson, listTicketsSchema } from '../../core/tickets/list.ts';
import { defineRoute, ticketRefParam } from '../route-table.ts';
import { ticketPageSchema } from '../../core/tickets/page-schema.ts';
import { sendResult } from '../json-text.ts';

/** Routes for GET /tickets and GET /tickets/:ref (issue 3). */
export const ticketsReadRoutes = [
  // sends the summaries as the JSON text PostgreSQL wrote (listTicketsJson: same page as listTickets)
  defineRoute({ method: 'GET', path: '/tickets', op: listTicketsJson, input: { query: listTicketsSchema } }),
  defineRoute({
    method: 'GET',
    path: '/tickets/:ref',
    // sends the page as JSON text, PostgreSQL's parts unparsed (readTicketPageJson: same page as readTicketPage)
    op: readTicketPageJson,
    input: { params: z.object({ ref: ticketRefParam }) },
    output: { 200: ticketPageSchema, 304: null },
    // the path and the If-None-Match header; the query is not read
    sent: ({ ctx, params }) => ({ ref: params.ref, ifNoneMatch: ctx.get('if-none-match') || null }),
    respond: (ctx, read) => {
      ctx.set('ETag', read.etag);
      if (read.status === 304) ctx.status = 304;
      else sendResult(ctx, read.page);
    },
  }),
];
