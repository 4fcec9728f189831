import type { Db } from '../db/connect.ts';
import { TokenVerifier } from '../core/auth/token-verifier.ts';
import { startCaches, stopCaches } from '../core/cache.ts';
import { makeCtx } from '../core/ctx.ts';
import { unauthenticated } from '../core/errors.ts';
import { makeLogger } from '../log.ts';
import { parseOptions } from './options.ts';
import { buildMcpServer } from './server.ts';
import { LineTransport } from './stdio-transport.ts';
import { guardRequests } from './wire.ts';

/** `wt mcp --toolsets a,b --readonly`: flags win over WT_MCP_TOOLSETS / WT_MCP_READONLY. */
export interface StdioFlags {
  toolsets?: string;
  readonly?: boolean;
}

/** An empty environment variable counts as unset, as shells and launchers commonly mean it. */
const envValue = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v);

/**
 * `wt mcp`: the same tools over stdio for a local assistant, authenticated by WT_TOKEN.
 * Resolves when the client closed stdin and every call it sent has been answered.
 */
export async function serveStdio(sql: Db, env: NodeJS.ProcessEnv, flags: StdioFlags = {}): Promise<void> {
  const token = env.WT_TOKEN;
  if (!token) throw unauthenticated('Set WT_TOKEN to an API token.');
  // refused before anything else: a typo must not start a server with no tools
  const opts = parseOptions(flags.toolsets ?? envValue(env.WT_MCP_TOOLSETS), flags.readonly ? 'true' : envValue(env.WT_MCP_READONLY), {
    toolsets: flags.toolsets !== undefined ? '--toolsets' : 'WT_MCP_TOOLSETS',
    readonly: 'WT_MCP_READONLY',
  });
  const verifier = new TokenVerifier(sql, 0);
  const principal = { ...(await verifier.verify(token, null, new Date())), source: 'mcp' as const, door: 'mcp' as const };
  // stdout carries the protocol: logs go to stderr
  const log = makeLogger(env.LOG_LEVEL ?? 'info', true);
  // a long-lived process, like the web one: the same caches, kept fresh by the database's notifications
  const caches = await startCaches(sql);
  try {
    const server = buildMcpServer(
      (p) => makeCtx({ sql, caches }, p),
      principal,
      opts,
      (err, tool) => log.error({ err, tool }, 'mcp tool failed'),
    );
    const transport = new LineTransport();
    transport.onerror = (err) => log.warn({ err }, 'mcp stdio');
    await server.connect(transport);
    guardRequests(transport);
    await transport.drained;
    await server.close();
  } finally {
    await stopCaches(caches);
  }
}
