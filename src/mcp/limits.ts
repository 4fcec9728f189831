import type { Principal } from '../core/auth/principal.ts';
import { isAppError } from '../core/errors.ts';
import type { RequestKind } from '../core/limits/token-limits.ts';
import type { Services } from '../core/services.ts';
import type { McpContext } from './context.ts';
import { allTools } from './registry.ts';
import { errorResult } from './tool.ts';
import { rpcError } from './wire.ts';

const writingTools = new Set(allTools.filter((t) => t.writes).map((t) => t.name));

const isToolCall = (m: unknown): m is { id?: unknown; method: 'tools/call'; params?: { name?: unknown } } =>
  Boolean(m && typeof m === 'object' && (m as { method?: unknown }).method === 'tools/call');

/** A call of a tool that changes data is a write (REST's POST/PATCH/DELETE); everything else, listing included, a read. */
function kindOf(body: unknown): RequestKind {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => isToolCall(m) && writingTools.has(String(m.params?.name))) ? 'write' : 'read';
}

/**
 * Counts an MCP request against its token's budget, shared with REST, and puts the RateLimit
 * headers on the response. Over the limit, a tools/call is answered as a tool result (isError,
 * code `rate_limited`, `details.retryAfter`) that an assistant can read and act on; any other
 * message gets HTTP 429 with a JSON-RPC error. Returns true when it answered.
 */
export async function limitMcpRequest(deps: Services, ctx: McpContext, principal: Principal): Promise<boolean> {
  if (!deps.limits || !principal.tokenId) return false;
  const body: unknown = ctx.request.body;
  try {
    ctx.set(await deps.limits.consume(principal.tokenId, kindOf(body)));
    return false;
  } catch (err) {
    if (!isAppError(err) || err.code !== 'rate_limited') throw err;
    ctx.set(err.headers);
    const id = body && typeof body === 'object' && !Array.isArray(body) ? (body as { id?: unknown }).id : null;
    if (isToolCall(body) && id !== undefined && id !== null) {
      ctx.status = 200;
      ctx.body = { jsonrpc: '2.0', id, result: errorResult(err) };
    } else {
      ctx.status = 429;
      ctx.body = rpcError(id, -32000, err.message, { code: err.code, reason: err.reason ?? null, ...err.details });
    }
    return true;
  }
}
