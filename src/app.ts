import Koa from 'koa';
import type { Services } from './core/services.ts';
import { mountRest, parseJsonBody } from './http/app.ts';
import type { AppState } from './http/context.ts';
import { jsonOnly, responseHeaders } from './http/middleware/basics.ts';
import { errorEnvelope } from './http/middleware/errors.ts';
import { cleanInput } from './http/middleware/input.ts';
import { mcpBodyErrors, mcpRoutes } from './mcp/http.ts';
import { oauthServer } from './http/oauth/server.ts';
import { outboxDir } from './config.ts';
import { opsConsole } from './ops/console.ts';
import { crontab } from './core/jobs/catalog.ts';

/**
 * The web process's Koa app: REST from src/http and /mcp from src/mcp, composed here so that
 * neither adapter imports the other. The order is the middleware's contract with itself.
 */
export function buildApp(services: Services): Koa<AppState> {
  const app = new Koa<AppState>({ proxy: false });
  app.silent = true;
  app.use(responseHeaders);
  app.use(errorEnvelope(services.log));
  // the console (/ops) answers HTML and parses its own form posts, so it comes before the JSON-only rules
  app.use(opsConsole(services, { crontab, outboxDir: services.config.SMTP_URL ? null : outboxDir(services.config) }));
  // the OAuth authorization server parses its own bodies (forms) and answers HTML and OAuth JSON
  app.use(oauthServer(services, { extraCa: services.outboundCa }));
  app.use(mcpBodyErrors); // /mcp answers body errors in JSON-RPC, not the envelope
  app.use(jsonOnly);
  app.use(parseJsonBody());
  // MCP answers bad arguments as tool results (isError), so its adapter applies the input rule itself
  const mcp = mcpRoutes(services);
  app.use(mcp.routes()).use(mcp.allowedMethods());
  app.use(cleanInput);
  mountRest(app, services);
  return app;
}
