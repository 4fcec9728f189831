import { z } from 'zod';
import { archiveTicket } from '../../core/tickets/archive.ts';
import { createTicket } from '../../core/tickets/create.ts';
import { deleteTicket } from '../../core/tickets/delete.ts';
import { ticketEtag } from '../../core/tickets/etag.ts';
import type { TicketPage } from '../../core/tickets/get.ts';
import { moveTicket } from '../../core/tickets/move.ts';
import { redactTicket } from '../../core/tickets/redact.ts';
import { archiveTicketFields, createTicketInput, moveTicketFields, redactTicketFields, updateTicketFields } from '../../core/tickets/schemas.ts';
import { updateTicket } from '../../core/tickets/update.ts';
import type { AppContext } from '../context.ts';
import { defineRoute, ticketRefParam, idParam, opInput } from '../route-table.ts';

const byRef = z.object({ ref: ticketRefParam });

/** A changed ticket's page, with its new version as the ETag (what the next If-Match sends). */
const withEtag = (ctx: AppContext, page: TicketPage) => {
  ctx.set('ETag', ticketEtag(page));
  ctx.body = page;
};

/** Routes for ticket create, update, move, archive, delete, redact (issue 3). */
export const ticketsWriteRoutes = [
  defineRoute({ method: 'POST', path: '/tickets', op: createTicket, input: { body: createTicketInput }, status: 201 }),
  defineRoute({
    method: 'PATCH',
    path: '/tickets/:ref',
    op: updateTicket,
    input: { params: byRef, body: updateTicketFields },
    sent: ({ ctx, params }) => opInput(ctx.request.body, { ref: params.ref, ifMatch: ctx.get('if-match') || null }),
    respond: withEtag,
  }),
  defineRoute({ method: 'POST', path: '/tickets/:ref/move', op: moveTicket, input: { params: byRef, body: moveTicketFields }, respond: withEtag }),
  defineRoute({ method: 'POST', path: '/tickets/:ref/archive', op: archiveTicket, input: { params: byRef, body: archiveTicketFields } }),
  defineRoute({ method: 'DELETE', path: '/tickets/:ref', op: deleteTicket, input: { params: byRef } }),
  defineRoute({
    method: 'POST',
    path: '/tickets/:id/redact',
    op: redactTicket,
    // redaction names the ticket by UUID only, never by a human id that could be reused
    input: { params: z.object({ id: idParam('id') }), body: redactTicketFields },
  }),
];
