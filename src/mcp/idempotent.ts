import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Ctx } from '../core/ctx.ts';
import { fingerprintOf, runIdempotent } from '../core/idempotency/keys.ts';

/** Codes of results that are failures of ours, not answers: never stored, so a retry runs again. */
const SERVER_FAILURES = new Set(['internal', 'unavailable']);

/**
 * Runs a write tool call at most once per token and key, through the same core mechanism as REST:
 * the call runs in the key's transaction (its core operations join it) and its result is stored
 * with its writes; a replay returns the stored result. `rawArgs` are the arguments without the key.
 */
export async function runToolOnce(
  ctx: Ctx,
  tool: string,
  key: string,
  rawArgs: Record<string, unknown>,
  call: (ctx: Ctx) => Promise<CallToolResult>,
): Promise<CallToolResult> {
  const tokenId = ctx.principal.tokenId;
  if (!tokenId) return call(ctx);
  const fingerprint = fingerprintOf('mcp', tool, JSON.stringify(rawArgs));
  const { response } = await runIdempotent(ctx.sql, { tokenId, key, fingerprint }, ctx.now(), async (sql) => {
    const result = await call({ ...ctx, sql, inTx: true });
    const code = (result.structuredContent as { code?: string } | undefined)?.code ?? '';
    const status = !result.isError ? 200 : SERVER_FAILURES.has(code) ? 500 : 400;
    return { status, body: JSON.stringify(result), headers: {} };
  });
  return JSON.parse(response.body!) as CallToolResult;
}
