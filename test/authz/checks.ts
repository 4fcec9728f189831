import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { AuthzWorld, Reply } from './world.ts';

/** What test/authz-matrix.test.ts and test/authz-tenancy.test.ts both check of an answer, and the MCP calls both make. */

/** A refusal in the error envelope (JSON-RPC's own error for /mcp); null when it is. */
export function envelopeProblem(path: string, res: Reply): string | null {
  if (res.status < 400) return null;
  const e = res.json?.error;
  if (path === '/mcp' && e && typeof e.message === 'string') return null; // JSON-RPC errors
  if (!e || typeof e.code !== 'string' || typeof e.message !== 'string') return `not the error envelope: ${res.text.slice(0, 200)}`;
  return null;
}

/** Arguments for a tool's required inputs, by name; what a tool needs beyond these it does not get. */
export function argsFor(w: AuthzWorld, tool: Tool, ticket: string): Record<string, unknown> {
  const schema = tool.inputSchema as { properties?: Record<string, { items?: { enum?: string[] } }>; required?: string[] };
  const byName: Record<string, unknown> = { ticket, ref: ticket, state: w.states.default, stateId: w.states.default, from: w.today, to: w.today };
  const args: Record<string, unknown> = {};
  for (const name of schema.required ?? []) if (name in byName) args[name] = byName[name];
  const include = schema.properties?.include?.items?.enum;
  if (include) args.include = include;
  return args;
}
