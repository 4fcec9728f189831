import { z } from 'zod';
import { archiveTicket } from '../../core/tickets/archive.ts';
import { createTicket } from '../../core/tickets/create.ts';
import { deleteTicket } from '../../core/tickets/delete.ts';
import { ticketEtag } from '../../core/tickets/etag.ts';
import { moveTicket } from '../../core/tickets/move.ts';
import { redactTicket } from '../../core/tickets/redact.ts';
import { archiveTicketFields, createTicketInput, moveTicketFields, redactTicketFields, updateTicketFields } from '../../core/tickets/schemas.ts';
import { updateTicket } from '../../core/tickets/update.ts';
import { coreCtx } from '../context.ts';
import { defineRoute, ticketRefParam, idParam, opInput } from '../route-table.ts';
import { ticketSummarySchema } from '../../core/tickets/summary-schema.ts';
import { ticketPageSchema } from '../../core/tickets/page-schema.ts';
import { okSchema } from '../../core/response-schema.ts';
import { redactedSchema } from '../../core/tickets/redact-schema.ts';

const byRef = z.object({ ref: ticketRefParam });

/** Routes for ticket create, update, move, archive, delete, redact (issue 3). */
export const ticketsWriteRoutes = [
  defineRoute({
    method: 'POST',
    path: '/tickets',
    action: 'tickets.create',
    input: { body: createTicketInput },
    output: { 201: ticketSummarySchema },
    handler: async ({ ctx, deps }) => {
      ctx.status = 201;
      ctx.body = await createTicket(coreCtx(deps, ctx), ctx.request.body);
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/tickets/:ref',
    action: 'tickets.update',
    input: { params: byRef, body: updateTicketFields },
    output: ticketPageSchema,
    handler: async ({ ctx, deps, params }) => {
      const page = await updateTicket(coreCtx(deps, ctx), opInput(ctx.request.body, { ref: params.ref, ifMatch: ctx.get('if-match') || null }));
      ctx.set('ETag', ticketEtag(page));
      ctx.body = page;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/tickets/:ref/move',
    action: 'tickets.move',
    input: { params: byRef, body: moveTicketFields },
    output: ticketPageSchema,
    handler: async ({ ctx, deps, params }) => {
      const page = await moveTicket(coreCtx(deps, ctx), opInput(ctx.request.body, params));
      ctx.set('ETag', ticketEtag(page));
      ctx.body = page;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/tickets/:ref/archive',
    action: 'tickets.archive',
    input: { params: byRef, body: archiveTicketFields },
    output: okSchema,
    handler: async ({ ctx, deps, params }) => {
      ctx.body = await archiveTicket(coreCtx(deps, ctx), opInput(ctx.request.body, params));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/tickets/:ref',
    action: 'tickets.delete',
    input: { params: byRef },
    output: okSchema,
    handler: async ({ ctx, deps, params }) => {
      ctx.body = await deleteTicket(coreCtx(deps, ctx), params);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/tickets/:id/redact',
    action: 'tickets.redact',
    // redaction names the ticket by UUID only, never by a human id that could be reused
    input: { params: z.object({ id: idParam('id') }), body: redactTicketFields },
    output: redactedSchema,
    handler: async ({ ctx, deps, params }) => {
      ctx.body = await redactTicket(coreCtx(deps, ctx), opInput(ctx.request.body, params));
    },
  }),
];
