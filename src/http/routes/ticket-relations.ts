import { Router } from '@koa/router';
import { addCodehostLink } from '../../core/codehost/add.ts';
import { listCodehostLinks } from '../../core/codehost/list.ts';
import { removeCodehostLink } from '../../core/codehost/remove.ts';
import { addLink } from '../../core/links/add.ts';
import { removeLink } from '../../core/links/remove.ts';
import { setParent } from '../../core/tickets/parent.ts';
import { parseUuid } from '../../core/validation.ts';
import { addViewers } from '../../core/viewers/add.ts';
import { previewVisibility } from '../../core/viewers/preview.ts';
import { removeViewer } from '../../core/viewers/remove.ts';
import { coreCtx, type AppDeps, type AppState } from '../context.ts';
import { authenticate } from '../middleware/auth.ts';

/** Routes for parent, links, code-host references, viewers, visibility preview (issue 3). */
export function ticketRelationsRoutes(deps: AppDeps) {
  const r = new Router<AppState>();
  const auth = authenticate(deps);

  r.put('/tickets/:ref/parent', auth, async (ctx) => {
    ctx.body = await setParent(coreCtx(deps, ctx), ctx.params.ref!, ctx.request.body);
  });

  r.post('/tickets/:ref/links', auth, async (ctx) => {
    ctx.body = await addLink(coreCtx(deps, ctx), ctx.params.ref!, ctx.request.body);
    ctx.status = 201;
  });
  r.delete('/tickets/:ref/links/:linkId', auth, async (ctx) => {
    ctx.body = await removeLink(coreCtx(deps, ctx), ctx.params.ref!, parseUuid(ctx.params.linkId, 'linkId'));
  });

  r.post('/tickets/:ref/codehost', auth, async (ctx) => {
    ctx.body = await addCodehostLink(coreCtx(deps, ctx), ctx.params.ref!, ctx.request.body);
    ctx.status = 201;
  });
  r.delete('/tickets/:ref/codehost/:linkId', auth, async (ctx) => {
    ctx.body = await removeCodehostLink(coreCtx(deps, ctx), ctx.params.ref!, parseUuid(ctx.params.linkId, 'linkId'));
  });
  r.get('/codehost/links', auth, async (ctx) => {
    ctx.body = await listCodehostLinks(coreCtx(deps, ctx));
  });

  r.post('/tickets/:ref/viewers', auth, async (ctx) => {
    ctx.body = await addViewers(coreCtx(deps, ctx), ctx.params.ref!, ctx.request.body);
  });
  r.delete('/tickets/:ref/viewers/:identityId', auth, async (ctx) => {
    ctx.body = await removeViewer(coreCtx(deps, ctx), ctx.params.ref!, parseUuid(ctx.params.identityId, 'identityId'));
  });
  r.post('/tickets/:ref/visibility', auth, async (ctx) => {
    ctx.body = await previewVisibility(coreCtx(deps, ctx), ctx.params.ref!, ctx.request.body);
  });
  return r;
}
