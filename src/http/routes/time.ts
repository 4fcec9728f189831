import { Router } from '@koa/router';
import { closePeriod, listPeriods, openPeriod, reopenPeriod } from '../../core/periods/manage.ts';
import { createCategory, listCategories, setProjectCategory } from '../../core/time/categories.ts';
import { correctTime } from '../../core/time/correct.ts';
import { deleteTime } from '../../core/time/delete.ts';
import { editTime } from '../../core/time/edit.ts';
import { listTime } from '../../core/time/list.ts';
import { logTime } from '../../core/time/log.ts';
import { updateMemberSettings } from '../../core/time/member-settings.ts';
import { reattributeTicketTime } from '../../core/time/reattribute.ts';
import { parseUuid } from '../../core/validation.ts';
import { coreCtx, type AppDeps, type AppState } from '../context.ts';
import { authenticate } from '../middleware/auth.ts';

/** Routes for time entries, periods, consultant categories and members' time settings (issue 5). */
export function timeRoutes(deps: AppDeps) {
  const r = new Router<AppState>();
  const auth = authenticate(deps);

  r.get('/time', auth, async (ctx) => {
    ctx.body = await listTime(coreCtx(deps, ctx), ctx.query);
  });
  r.post('/time', auth, async (ctx) => {
    ctx.status = 201;
    ctx.body = await logTime(coreCtx(deps, ctx), ctx.request.body);
  });
  r.patch('/time/:id', auth, async (ctx) => {
    ctx.body = await editTime(coreCtx(deps, ctx), parseUuid(ctx.params.id), ctx.request.body);
  });
  r.delete('/time/:id', auth, async (ctx) => {
    ctx.body = await deleteTime(coreCtx(deps, ctx), parseUuid(ctx.params.id));
  });
  r.post('/time/:id/corrections', auth, async (ctx) => {
    ctx.status = 201;
    ctx.body = await correctTime(coreCtx(deps, ctx), parseUuid(ctx.params.id), ctx.request.body);
  });
  r.post('/time/tickets/:id/reattribute', auth, async (ctx) => {
    ctx.body = await reattributeTicketTime(coreCtx(deps, ctx), parseUuid(ctx.params.id));
  });

  r.get('/periods', auth, async (ctx) => {
    ctx.body = await listPeriods(coreCtx(deps, ctx));
  });
  r.post('/periods', auth, async (ctx) => {
    ctx.status = 201;
    ctx.body = await openPeriod(coreCtx(deps, ctx), ctx.request.body);
  });
  r.post('/periods/:id/close', auth, async (ctx) => {
    ctx.body = await closePeriod(coreCtx(deps, ctx), parseUuid(ctx.params.id));
  });
  r.post('/periods/:id/reopen', auth, async (ctx) => {
    ctx.body = await reopenPeriod(coreCtx(deps, ctx), parseUuid(ctx.params.id));
  });

  r.get('/categories', auth, async (ctx) => {
    ctx.body = await listCategories(coreCtx(deps, ctx));
  });
  r.post('/categories', auth, async (ctx) => {
    ctx.status = 201;
    ctx.body = await createCategory(coreCtx(deps, ctx), ctx.request.body);
  });
  r.patch('/members/:identityId', auth, async (ctx) => {
    ctx.body = await updateMemberSettings(coreCtx(deps, ctx), parseUuid(ctx.params.identityId, 'identityId'), ctx.request.body);
  });
  r.put('/projects/:projectId/members/:identityId/category', auth, async (ctx) => {
    const c = coreCtx(deps, ctx);
    ctx.body = await setProjectCategory(c, parseUuid(ctx.params.projectId, 'projectId'), parseUuid(ctx.params.identityId, 'identityId'), ctx.request.body);
  });
  return r;
}
