import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Principal } from '../core/auth/principal.ts';
import type { Ctx } from '../core/ctx.ts';
import { allTools } from './registry.ts';
import { runTool, toolsets, type Surface, type ToolDef, type Toolset } from './tool.ts';

export interface McpOptions {
  /** Only these toolsets (null: all). */
  toolsets: ReadonlySet<Toolset> | null;
  /** Read-only connection: no tool that changes data. */
  readonly: boolean;
}

export function surfaceOf(p: Principal): Surface {
  return { principal: p, canWrite: p.scopes.has('write'), inbox: !p.projectIds && p.scopes.has('triage'), projectIds: p.projectIds };
}

/** Parses `?toolsets=tickets,time&readonly=1` (or the X-MCP-Toolsets / X-MCP-Readonly headers). */
export function parseOptions(toolsetsParam: string | undefined, readonlyParam: string | undefined): McpOptions {
  const names = (toolsetsParam ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const known = names.filter((n): n is Toolset => (toolsets as readonly string[]).includes(n));
  return { toolsets: names.length ? new Set(known) : null, readonly: ['1', 'true', 'yes'].includes((readonlyParam ?? '').toLowerCase()) };
}

/** The tools this connection may call: the token decides (scopes), then the connection narrows (toolsets, read-only). */
export function availableTools(surface: Surface, opts: McpOptions, tools: ToolDef[] = allTools): ToolDef[] {
  return tools.filter(
    (t) => surface.principal.scopes.has('read') && (!t.writes || (surface.canWrite && !opts.readonly)) && (!opts.toolsets || opts.toolsets.has(t.toolset)),
  );
}

export const SERVER_INFO = { name: 'worktracker', version: '0.1.0' };

const INSTRUCTIONS =
  'Work tracker for an agency: tickets (human ids like WEB-12), boards, time entries, client timesheets. ' +
  'Start with get_context_pack for what needs attention, or search_tickets. Tools accept states, kinds, priorities and labels by id, key or name, people by email, tickets by human id. ' +
  'Lists are compact and paginate with nextCursor. Errors come back as results with isError and a {code, reason, details} object.';

/**
 * An MCP server for one verified principal. Tool handlers read the principal from
 * `extra.authInfo` (set by the HTTP transport) and fall back to the one given (stdio).
 */
export function buildMcpServer(makeCtx: (p: Principal) => Ctx, principal: Principal, opts: McpOptions): McpServer {
  const server = new McpServer(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });
  // Arguments are validated by each tool's own schema inside runTool, so that a bad argument is an
  // `invalid` tool result with a reason (like REST's 400) rather than the SDK's plain-text error.
  (server as unknown as { validateToolInput: (tool: unknown, args: unknown) => Promise<unknown> }).validateToolInput = async (_tool, args) => args ?? {};
  const surface = surfaceOf(principal);
  for (const tool of availableTools(surface, opts)) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.input(surface),
        outputSchema: tool.output,
        annotations: {
          title: tool.title,
          readOnlyHint: !tool.writes,
          destructiveHint: Boolean(tool.destructive),
          idempotentHint: Boolean(tool.idempotent),
          openWorldHint: false,
        },
      },
      async (args: unknown, extra: { authInfo?: { extra?: Record<string, unknown> } }) => {
        const p = (extra.authInfo?.extra?.principal as Principal | undefined) ?? principal;
        return runTool(tool, makeCtx(p), surfaceOf(p), args);
      },
    );
  }
  return server;
}
