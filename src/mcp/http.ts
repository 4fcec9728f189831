import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Router } from '@koa/router';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { Middleware } from 'koa';
import type { Principal } from '../core/auth/principal.ts';
import { allowedHosts, assertHostAndOrigin } from '../core/auth/origin.ts';
import { MCP_PATH, mcpChallenge } from '../web/resource-metadata.ts';
import { bearerSecret } from '../core/auth/token-verifier.ts';
import { clockOf, makeCtx } from '../core/ctx.ts';
import { AppError } from '../core/errors.ts';
import { toAppError } from '../core/failures.ts';
import type { Services } from '../core/services.ts';
import type { McpContext, McpState } from './context.ts';
import { parseOptions, type McpOptions } from './options.ts';
import { limitMcpRequest } from './limits.ts';
import { buildMcpServer } from './server.ts';
import { guardRequests, invalidMessage, parseError, rpcError, type RpcError } from './wire.ts';

function answer(ctx: McpContext, status: number, body: RpcError) {
  ctx.status = status;
  ctx.body = body;
}

/** Requests that reached the MCP route: errors from before it are about the body, and answered in JSON-RPC. */
const reachedRoute = new WeakSet<object>();

/**
 * Mounted before the body parser: on /mcp, a body the shared parser refuses (not JSON, JSON that
 * is not an object or array, too large, a bad encoding or content type) is answered as JSON-RPC,
 * which an MCP client understands, instead of the REST envelope. Errors from the route itself
 * (401 with WWW-Authenticate, a foreign Host) keep the envelope.
 */
export const mcpBodyErrors: Middleware = async (ctx, next) => {
  if (ctx.path !== '/mcp') return next();
  try {
    await next();
  } catch (err) {
    if (reachedRoute.has(ctx)) throw err;
    const raw = err && typeof err === 'object' ? (err as { body?: unknown }).body : undefined;
    if (typeof raw === 'string') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch {
        return answer(ctx as McpContext, 400, parseError());
      }
      return answer(ctx as McpContext, 400, invalidMessage(parsed) ?? rpcError(null, ErrorCode.InvalidRequest, 'Invalid request.'));
    }
    const e = toAppError(err);
    if (!e || e.status >= 500) throw err;
    // the SDK's transport answers its own HTTP-level refusals (406, 413, 415) with -32000 too
    answer(ctx as McpContext, e.status, rpcError(null, -32000, e.message, { code: e.code, reason: e.reason ?? null }));
  }
};

/**
 * A 401 on /mcp names where to learn how to authenticate (RFC 9728 §5.1: `resource_metadata`),
 * so MCP clients that discover auth the standard way find that a Bearer API token is wanted.
 */
function withChallenge(err: unknown, origin: string, tokenSent: boolean): unknown {
  const e = toAppError(err);
  if (!e || e.code !== 'unauthenticated') return err;
  return new AppError(e.code, e.message, e.details, { ...e.headers, 'WWW-Authenticate': mcpChallenge(origin, tokenSent) });
}

/** toolsets/readonly from the query string, else the X-MCP-* headers; an unknown value is refused. */
function connectionOptions(ctx: McpContext): McpOptions {
  const q = (name: string): string | undefined => {
    const v = ctx.query[name];
    return Array.isArray(v) ? v.join(',') : v;
  };
  const fromQuery = { toolsets: q('toolsets'), readonly: q('readonly') };
  const header = (name: string) => (ctx.headers[name] === undefined ? undefined : ctx.get(name));
  return parseOptions(fromQuery.toolsets ?? header('x-mcp-toolsets'), fromQuery.readonly ?? header('x-mcp-readonly'), {
    toolsets: fromQuery.toolsets !== undefined ? 'toolsets' : 'X-MCP-Toolsets',
    readonly: fromQuery.readonly !== undefined ? 'readonly' : 'X-MCP-Readonly',
  });
}

/**
 * Streamable HTTP at /mcp, stateless: every request gets a server built for its token's
 * surface, with the verified principal handed to the SDK as `req.auth`.
 */
export function mcpRoutes(deps: Services) {
  const r = new Router<McpState>();
  const hosts = allowedHosts(deps.config.HOST, deps.config.MCP_ALLOWED_HOSTS);
  const handle = async (ctx: McpContext) => {
    reachedRoute.add(ctx);
    assertHostAndOrigin(hosts, ctx.get('host'), ctx.get('origin'));
    let secret: string;
    let principal: Principal;
    const origin = `${ctx.protocol}://${ctx.host}`;
    try {
      secret = bearerSecret(ctx.get('authorization'));
      // a `wt_` token, or an OAuth access token whose audience is this endpoint (RFC 8707)
      principal = { ...(await deps.verifier.verifyForResource(secret, `${origin}${MCP_PATH}`, clockOf(deps)())), source: 'mcp', door: 'mcp' };
    } catch (err) {
      throw withChallenge(err, origin, ctx.get('authorization') !== '');
    }
    if (await limitMcpRequest(deps, ctx, principal)) return;
    const body: unknown = ctx.request.body;
    const requestId = body && typeof body === 'object' && !Array.isArray(body) ? (body as { id?: unknown }).id : null;
    let opts: McpOptions;
    try {
      opts = connectionOptions(ctx);
    } catch (err) {
      // shown by MCP clients when connecting: the SDK client reports the HTTP error with this body
      if (!(err instanceof AppError)) throw err;
      return answer(ctx, 400, rpcError(requestId, ErrorCode.InvalidParams, err.message, { code: err.code, reason: err.reason ?? null, ...err.details }));
    }
    if (ctx.method === 'POST') {
      const bad = invalidMessage(body);
      if (bad) return answer(ctx, 400, bad);
    }
    const server = buildMcpServer(
      (p) => makeCtx(deps, p),
      principal,
      opts,
      (err, tool) => deps.log.error({ err, requestId: ctx.state.requestId, tool }, 'mcp tool failed'),
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    ctx.respond = false;
    const req = ctx.req as typeof ctx.req & { auth?: AuthInfo };
    req.auth = { token: secret, clientId: principal.tokenId ?? principal.identityId, scopes: [...principal.scopes], extra: { principal } };
    ctx.res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    guardRequests(transport);
    await transport.handleRequest(req, ctx.res, body);
  };
  r.post('/mcp', handle);
  // Stateless: no server-initiated stream to open (GET) and no session to end (DELETE). Answered
  // as the MCP spec allows, 405, so a client never holds an event stream that nothing writes to.
  const noStream = (ctx: McpContext) => {
    reachedRoute.add(ctx);
    ctx.set('Allow', 'POST');
    answer(ctx, 405, rpcError(null, -32000, 'Method not allowed: this server is stateless; send JSON-RPC messages with POST.'));
  };
  r.get('/mcp', noStream);
  r.delete('/mcp', noStream);
  return r;
}
