import Koa from 'koa';
import { Router } from '@koa/router';
import { HttpMethodEnum, koaBody } from 'koa-body';
import type { AppDeps, AppState } from './context.ts';
import { jsonOnly, requestId, securityHeaders } from './middleware/basics.ts';
import { errorEnvelope } from './middleware/errors.ts';
import { bodyParseError, cleanInput } from './middleware/input.ts';
import { healthRoutes } from './routes/health.ts';
import { sessionRoutes } from './routes/session.ts';
import { workspaceRouters } from './routes/index.ts';
import { mcpBodyErrors, mcpRoutes } from '../mcp/http.ts';

export const JSON_LIMIT = '1mb';

export function buildApp(deps: AppDeps): Koa<AppState> {
  const app = new Koa<AppState>({ proxy: false });
  app.silent = true;
  app.use(requestId);
  app.use(securityHeaders);
  app.use(errorEnvelope(deps.log));
  app.use(mcpBodyErrors); // /mcp answers body errors in JSON-RPC, not the envelope
  app.use(jsonOnly);
  app.use(
    koaBody({
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
    }),
  );
  // MCP answers bad arguments as tool results (isError), so its adapter applies the input rule itself
  const mcp = mcpRoutes(deps);
  app.use(mcp.routes()).use(mcp.allowedMethods());
  app.use(cleanInput);
  // allowedMethods sets 405/501 and Allow without a body; the error envelope turns that into method_not_allowed
  for (const r of [healthRoutes(deps), sessionRoutes(deps)]) app.use(r.routes()).use(r.allowedMethods());
  const ws = new Router<AppState>({ prefix: '/api/w/:slug' });
  for (const make of workspaceRouters) {
    const r = make(deps);
    ws.use(r.routes(), r.allowedMethods());
  }
  app.use(ws.routes()).use(ws.allowedMethods());
  return app;
}
