import type Koa from 'koa';
import { Router } from '@koa/router';
import { HttpMethodEnum, koaBody } from 'koa-body';
import type { AppDeps, AppState } from './context.ts';
import { bodyParseError } from './middleware/input.ts';
import { healthRoutes } from './routes/health.ts';
import { sessionRoutes } from './routes/session.ts';
import { workspaceRouters } from './routes/index.ts';

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
 * Mounts the REST routers: health and session, then the workspace routes under /api/w/:slug.
 * allowedMethods sets 405/501 and Allow without a body; the error envelope turns that into
 * method_not_allowed.
 */
export function mountRest(app: Koa<AppState>, deps: AppDeps): void {
  for (const r of [healthRoutes(deps), sessionRoutes(deps)]) app.use(r.routes()).use(r.allowedMethods());
  const ws = new Router<AppState>({ prefix: '/api/w/:slug' });
  for (const make of workspaceRouters) {
    const r = make(deps);
    ws.use(r.routes(), r.allowedMethods());
  }
  app.use(ws.routes()).use(ws.allowedMethods());
}
