import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { z } from 'zod';
import type { Principal } from '../core/auth/principal.ts';
import type { Ctx } from '../core/ctx.ts';
import { admitErrors, toolJsonSchema } from './json-schema.ts';
import { allTools } from './registry.ts';
import { runTool, surfaceKey, surfaceOf, toolsets, type Surface, type ToolDef, type ToolErrorLog, type Toolset } from './tool.ts';

export { surfaceOf };

export interface McpOptions {
  /** Only these toolsets (null: all). */
  toolsets: ReadonlySet<Toolset> | null;
  /** Read-only connection: no tool that changes data. */
  readonly: boolean;
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

/** The tools this connection may call: the token decides (scopes, role), then the connection narrows (toolsets, read-only). */
export function availableTools(surface: Surface, opts: McpOptions, tools: ToolDef[] = allTools): ToolDef[] {
  return tools.filter(
    (t) =>
      surface.principal.scopes.has('read') &&
      (!t.writes || (surface.canWrite && !opts.readonly)) &&
      (!opts.toolsets || opts.toolsets.has(t.toolset)) &&
      (t.available?.(surface) ?? true),
  );
}

export const SERVER_INFO = { name: 'worktracker', version: '0.1.0' };

const INSTRUCTIONS =
  'Work tracker for an agency: tickets (human ids like WEB-12), boards, time entries, client timesheets. ' +
  'Start with get_context_pack for what needs attention, or search_tickets. Tools accept states, kinds, priorities and labels by id, key or name, people by email, tickets by human id. ' +
  'Lists are compact and paginate with nextCursor. Errors come back as results with isError and a {code, reason, details} object.';

interface PreparedTool {
  def: ToolDef;
  input: z.ZodObject;
  /** The tool as tools/list shows it (JSON schemas, annotations). */
  listed: Tool;
}

interface PreparedSurface {
  tools: PreparedTool[];
  listing: Tool[];
}

const MAX_PREPARED = 500;
const prepared = new Map<string, PreparedSurface>();

function optionsKey(opts: McpOptions): string {
  return `${opts.readonly ? 'ro' : 'rw'}:${opts.toolsets ? [...opts.toolsets].sort().join(',') : '*'}`;
}

/**
 * The tools of a surface with their schemas, cached by everything that shapes them (scopes, role
 * kind, allow-list, toolsets, read-only). Building zod and JSON schemas is the costly part of a
 * stateless request; tokens with the same shape share one entry.
 */
export function prepareSurface(surface: Surface, opts: McpOptions): PreparedSurface {
  const key = `${surfaceKey(surface)}|${optionsKey(opts)}`;
  const hit = prepared.get(key);
  if (hit) return hit;
  const tools = availableTools(surface, opts).map((def): PreparedTool => {
    const input = def.input(surface);
    const listed: Tool = {
      name: def.name,
      title: def.title,
      description: def.description,
      inputSchema: toolJsonSchema(input, 'input') as Tool['inputSchema'],
      outputSchema: admitErrors(toolJsonSchema(def.output, 'output')) as Tool['outputSchema'],
      annotations: {
        readOnlyHint: !def.writes,
        destructiveHint: Boolean(def.destructive),
        idempotentHint: Boolean(def.idempotent),
        openWorldHint: false,
      },
    };
    return { def, input, listed };
  });
  if (prepared.size >= MAX_PREPARED) prepared.clear();
  const entry = { tools, listing: tools.map((t) => t.listed) };
  prepared.set(key, entry);
  return entry;
}

/**
 * One JSON Schema validator for every server: the SDK otherwise builds an Ajv instance per
 * McpServer, which was three quarters of the cost of a stateless request's server (160 -> 40 µs).
 * This server never validates anything with it (it sends no elicitation requests).
 */
const sharedValidator = new AjvJsonSchemaValidator();

type Internals = {
  validateToolInput: (tool: unknown, args: unknown) => Promise<unknown>;
  validateToolOutput: (tool: unknown, result: unknown) => Promise<void>;
};

/**
 * An MCP server for one verified principal. Tool handlers read the principal from
 * `extra.authInfo` (set by the HTTP transport) and fall back to the one given (stdio).
 */
export function buildMcpServer(makeCtx: (p: Principal) => Ctx, principal: Principal, opts: McpOptions, logError?: ToolErrorLog): McpServer {
  const server = new McpServer(SERVER_INFO, {
    capabilities: { tools: { listChanged: false } },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: sharedValidator,
  });
  // Arguments and results are validated by each tool's own schemas inside runTool, so that a bad
  // argument is an `invalid` tool result with a reason (like REST's 400) rather than the SDK's
  // plain-text error, and a result is not parsed twice.
  const internals = server as unknown as Internals;
  internals.validateToolInput = async (_tool, args) => args ?? {};
  internals.validateToolOutput = async () => {};
  const surface = surfaceOf(principal);
  const { tools, listing } = prepareSurface(surface, opts);
  for (const { def, input, listed } of tools) {
    server.registerTool(
      def.name,
      {
        title: def.title,
        description: def.description,
        inputSchema: input,
        outputSchema: def.output,
        annotations: listed.annotations,
      },
      async (args: unknown, extra: { authInfo?: { extra?: Record<string, unknown> } }) => {
        const p = (extra.authInfo?.extra?.principal as Principal | undefined) ?? principal;
        return p === principal ? runTool(def, makeCtx(p), surface, args, input, logError) : runTool(def, makeCtx(p), surfaceOf(p), args, undefined, logError);
      },
    );
  }
  // tools/list from the cache: the SDK would convert every schema to JSON Schema on each request.
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listing }));
  return server;
}
