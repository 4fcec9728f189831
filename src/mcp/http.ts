import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Router } from '@koa/router';
import type { Principal } from '../core/auth/principal.ts';
import { forbidden, unauthenticated } from '../core/errors.ts';
import { coreCtx, type AppContext, type AppDeps, type AppState } from '../http/context.ts';
import { buildMcpServer, parseOptions } from './server.ts';

/** Hosts a browser may reach us under; anything else is a DNS-rebinding attempt. */
function allowedHosts(deps: AppDeps): Set<string> {
  const extra = (process.env.MCP_ALLOWED_HOSTS ?? '').split(',').map((h) => h.trim().toLowerCase());
  return new Set(['localhost', '127.0.0.1', '[::1]', deps.config.HOST.toLowerCase(), ...extra].filter(Boolean));
}

function hostname(hostHeader: string): string {
  const h = hostHeader.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  return h.split(':')[0]!;
}

/** Host and Origin must name this server (DNS-rebinding protection for a service on localhost). */
function checkHostAndOrigin(ctx: AppContext, hosts: Set<string>) {
  if (!hosts.has(hostname(ctx.get('host')))) throw forbidden('host_not_allowed', undefined, 'This Host is not allowed; set MCP_ALLOWED_HOSTS.');
  const origin = ctx.get('origin');
  if (origin) {
    let originHost = '';
    try {
      originHost = hostname(new URL(origin).host);
    } catch {
      /* malformed origin */
    }
    if (!hosts.has(originHost)) throw forbidden('origin_not_allowed', undefined, 'This Origin is not allowed.');
  }
}

/**
 * Streamable HTTP at /mcp, stateless: every request gets a server built for its token's
 * surface, with the verified principal handed to the SDK as `req.auth`.
 */
export function mcpRoutes(deps: AppDeps) {
  const r = new Router<AppState>();
  const hosts = allowedHosts(deps);
  const handle = async (ctx: AppContext) => {
    checkHostAndOrigin(ctx, hosts);
    const m = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'));
    if (!m) throw unauthenticated('Send Authorization: Bearer <token>.');
    const principal: Principal = { ...(await deps.verifier.verify(m[1]!, null, (deps.now ?? (() => new Date()))())), source: 'mcp' };
    const opts = parseOptions(
      (ctx.query.toolsets as string | undefined) ?? (ctx.get('x-mcp-toolsets') || undefined),
      (ctx.query.readonly as string | undefined) ?? (ctx.get('x-mcp-readonly') || undefined),
    );
    ctx.state.principal = principal;
    const server = buildMcpServer(
      (p) => ({ ...coreCtx(deps, ctx), principal: p }),
      principal,
      opts,
      (err, tool) => deps.log.error({ err, requestId: ctx.state.requestId, tool }, 'mcp tool failed'),
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    ctx.respond = false;
    const req = ctx.req as typeof ctx.req & { auth?: AuthInfo };
    req.auth = { token: m[1]!, clientId: principal.tokenId ?? principal.identityId, scopes: [...principal.scopes], extra: { principal } };
    ctx.res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, ctx.res, ctx.request.body);
  };
  r.post('/mcp', handle);
  r.get('/mcp', handle);
  r.delete('/mcp', handle);
  return r;
}
