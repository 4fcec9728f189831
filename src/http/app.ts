import type Koa from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import type { AppDeps, AppState } from './context.ts';
import { bodyParseError } from './middleware/input.ts';
import { restRouter } from './route-table.ts';
import { ROUTE_TABLE } from './routes/index.ts';

const JSON_LIMIT = '1mb';

const PARSED_METHODS = [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE];
const PARSED = new Set<string>(PARSED_METHODS);

/**
 * The one body parser of the app (REST and /mcp): JSON only, 1 MB, strict. A request of another
 * method (GET, HEAD) passes by without entering koa-body, which reads the content type four times
 * before it looks at the method.
 */
export function parseJsonBody(): Koa.Middleware {
  const parse = koaBody({
    json: true,
    jsonLimit: JSON_LIMIT,
    text: false,
    urlencoded: false,
    multipart: false,
    jsonStrict: true,
    parsedMethods: PARSED_METHODS,
    onError: (err, ctx) => {
      throw bodyParseError(err, ctx);
    },
  });
  return (ctx, next) => (PARSED.has(ctx.method) ? parse(ctx, next) : next());
}

/**
 * Mounts the REST API (src/http/routes/index.ts): every route of the table, health and session
 * ones and the workspace areas under /api/w/:slug, on ONE router, so a request is matched once
 * (a router per area each matched every request and added a layer of its own per area).
 * allowedMethods sets 405/501 and Allow without a body; the error envelope turns that into
 * method_not_allowed.
 */
export function mountRest(app: Koa<AppState>, deps: AppDeps): void {
  const r = restRouter(deps, ROUTE_TABLE);
  app.use(r.routes()).use(r.allowedMethods());
}
