import type Koa from 'koa';
import { Router } from '@koa/router';
import { HttpMethodEnum, koaBody } from 'koa-body';
import type { AppDeps, AppState } from './context.ts';
import { bodyParseError } from './middleware/input.ts';
import { routerOf, WORKSPACE_PREFIX } from './route-table.ts';
import { rootGroups, workspaceGroups } from './routes/index.ts';

const JSON_LIMIT = '1mb';

/** The one body parser of the app (REST and /mcp): JSON only, 1 MB, strict. */
export function parseJsonBody(): Koa.Middleware {
  return koaBody({
    json: true,
    jsonLimit: JSON_LIMIT,
    text: false,
    urlencoded: false,
    multipart: false,
    jsonStrict: true,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
    onError: (err, ctx) => {
      throw bodyParseError(err, ctx);
    },
  });
}

/**
 * Mounts the REST routers, built from the route table (src/http/routes/index.ts): health and
 * session, then the workspace areas under /api/w/:slug.
 * allowedMethods sets 405/501 and Allow without a body; the error envelope turns that into
 * method_not_allowed.
 */
export function mountRest(app: Koa<AppState>, deps: AppDeps): void {
  for (const group of rootGroups) {
    const r = routerOf(deps, group);
    app.use(r.routes()).use(r.allowedMethods());
  }
  const ws = new Router<AppState>({ prefix: WORKSPACE_PREFIX });
  for (const group of workspaceGroups) {
    const r = routerOf(deps, group);
    ws.use(r.routes(), r.allowedMethods());
  }
  app.use(ws.routes()).use(ws.allowedMethods());
}
