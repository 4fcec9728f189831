import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Db } from '../db/connect.ts';
import { TokenVerifier } from '../core/auth/tokens.ts';
import { unauthenticated } from '../core/errors.ts';
import { makeLogger } from '../log.ts';
import { buildMcpServer, parseOptions } from './server.ts';

/**
 * `wt mcp`: the same tools over stdio for a local assistant, authenticated by WT_TOKEN.
 * Resolves when the client closes the connection.
 */
export async function serveStdio(sql: Db, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const token = env.WT_TOKEN;
  if (!token) throw unauthenticated('Set WT_TOKEN to an API token.');
  const verifier = new TokenVerifier(sql, 0);
  const principal = { ...(await verifier.verify(token, null, new Date())), source: 'mcp' as const };
  // stdout carries the protocol: logs go to stderr
  const log = makeLogger(env.LOG_LEVEL ?? 'info', true);
  const server = buildMcpServer(
    (p) => ({ sql, principal: p, now: () => new Date() }),
    principal,
    parseOptions(env.WT_MCP_TOOLSETS, env.WT_MCP_READONLY),
    (err, tool) => log.error({ err, tool }, 'mcp tool failed'),
  );
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close();
}
