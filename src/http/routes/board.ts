import { Router } from '@koa/router';
import { getBoard } from '../../core/board/board.ts';
import { getBoardColumn } from '../../core/board/column.ts';
import { getMyWork } from '../../core/board/my.ts';
import { coreCtx, type AppDeps, type AppState } from '../context.ts';
import { authenticate } from '../middleware/auth.ts';

/** Routes for the board and "my work" (issue 4). */
export function boardRoutes(deps: AppDeps) {
  const r = new Router<AppState>();
  const auth = authenticate(deps);

  r.get('/board', auth, async (ctx) => {
    ctx.body = await getBoard(coreCtx(deps, ctx), ctx.query);
  });
  r.get('/board/:stateId', auth, async (ctx) => {
    ctx.body = await getBoardColumn(coreCtx(deps, ctx), ctx.params.stateId, ctx.query);
  });
  r.get('/my', auth, async (ctx) => {
    ctx.body = await getMyWork(coreCtx(deps, ctx));
  });
  return r;
}
