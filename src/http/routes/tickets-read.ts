import { Router } from '@koa/router';
import { readTicketPage } from '../../core/tickets/get.ts';
import { listTickets } from '../../core/tickets/list.ts';
import { coreCtx, type AppDeps, type AppState } from '../context.ts';
import { authenticate } from '../middleware/auth.ts';

/** Routes for GET /tickets and GET /tickets/:ref (issue 3). */
export function ticketsReadRoutes(deps: AppDeps) {
  const r = new Router<AppState>();
  const auth = authenticate(deps);

  r.get('/tickets', auth, async (ctx) => {
    ctx.body = await listTickets(coreCtx(deps, ctx), ctx.query);
  });
  r.get('/tickets/:ref', auth, async (ctx) => {
    const res = await readTicketPage(coreCtx(deps, ctx), ctx.params.ref ?? '', ctx.get('if-none-match'));
    ctx.set('ETag', res.etag);
    if (res.status === 304) {
      ctx.status = 304;
      return;
    }
    ctx.body = res.page;
  });
  return r;
}
