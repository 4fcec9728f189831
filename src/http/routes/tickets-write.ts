import { Router } from '@koa/router';
import { archiveTicket } from '../../core/tickets/archive.ts';
import { createTicket } from '../../core/tickets/create.ts';
import { deleteTicket } from '../../core/tickets/delete.ts';
import { ticketEtag } from '../../core/tickets/etag.ts';
import { moveTicket } from '../../core/tickets/move.ts';
import { redactTicket } from '../../core/tickets/redact.ts';
import { updateTicket } from '../../core/tickets/update.ts';
import { parseUuid } from '../../core/validation.ts';
import { coreCtx, type AppDeps, type AppState } from '../context.ts';
import { authenticate } from '../middleware/auth.ts';

/** Routes for ticket create, update, move, archive, delete, redact (issue 3). */
export function ticketsWriteRoutes(deps: AppDeps) {
  const r = new Router<AppState>();
  const auth = authenticate(deps);

  r.post('/tickets', auth, async (ctx) => {
    ctx.status = 201;
    ctx.body = await createTicket(coreCtx(deps, ctx), ctx.request.body);
  });
  r.patch('/tickets/:ref', auth, async (ctx) => {
    const page = await updateTicket(coreCtx(deps, ctx), ctx.params.ref!, ctx.request.body, { ifMatch: ctx.get('if-match') || null });
    ctx.set('ETag', ticketEtag(page));
    ctx.body = page;
  });
  r.post('/tickets/:ref/move', auth, async (ctx) => {
    const page = await moveTicket(coreCtx(deps, ctx), ctx.params.ref!, ctx.request.body);
    ctx.set('ETag', ticketEtag(page));
    ctx.body = page;
  });
  r.post('/tickets/:ref/archive', auth, async (ctx) => {
    ctx.body = await archiveTicket(coreCtx(deps, ctx), ctx.params.ref!, ctx.request.body);
  });
  r.delete('/tickets/:ref', auth, async (ctx) => {
    ctx.body = await deleteTicket(coreCtx(deps, ctx), ctx.params.ref!);
  });
  r.post('/tickets/:id/redact', auth, async (ctx) => {
    ctx.body = await redactTicket(coreCtx(deps, ctx), parseUuid(ctx.params.id, 'id'), ctx.request.body);
  });
  return r;
}
