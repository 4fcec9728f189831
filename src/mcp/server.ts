import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { readFileSync } from 'node:fs';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { z } from 'zod';
import type { Principal } from '../core/auth/principal.ts';
import type { Ctx } from '../core/ctx.ts';
import { availableTools, refusalFor, toolNotAvailable } from './admit.ts';
import { admitErrors, toolJsonSchema } from './json-schema.ts';
import type { McpOptions } from './options.ts';
import { completePrompt, getPrompt, listPrompts } from './prompts.ts';
import { allTools } from './registry.ts';
import { listResources, readResource, resourceTemplates } from './resources.ts';
import { ProtocolError } from './wire.ts';
import { errorResult, internalResult, runTool, surfaceKey, surfaceOf, type Surface, type ToolDef, type ToolErrorLog } from './tool.ts';

export { surfaceOf };

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

export const SERVER_INFO = { name: 'worktracker', title: 'Work tracker', version };

export const INSTRUCTIONS =
  'Work tracker for an agency: tickets (human ids like WEB-12), boards, time entries, client timesheets. ' +
  'Start with get_context_pack for what needs your attention; search_tickets finds the rest, get_ticket shows one. ' +
  'Names are accepted everywhere: projects by key or name (list_projects), people by email or name (list_people), states, kinds, priorities and labels by name (get_workflow), tickets by human id. ' +
  'Lists are compact; page with nextCursor (the same cursors as the REST API). ' +
  'Resources: worktracker://tickets/{humanId} and worktracker://documents/{id} (timesheets you may download). ' +
  'Prompts (with completions for their arguments): log_week_time, triage_inbox, summarise_client_month, as your token allows. ' +
  'Errors come back as results with isError and {code, reason, message, details}; details.choices lists valid names. ' +
  'To connect, send a wt_ API token as Bearer, or authorize with OAuth 2.1 (the 401 names the metadata; a person approves the client on a consent page and revokes it at /oauth/grants).';

interface PreparedTool {
  def: ToolDef;
  input: z.ZodObject;
  /** The tool as tools/list shows it (JSON schemas, annotations). */
  listed: Tool;
}

interface PreparedSurface {
  tools: Map<string, PreparedTool>;
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
      annotations: annotationsOf(def),
    };
    return { def, input, listed };
  });
  if (prepared.size >= MAX_PREPARED) prepared.clear();
  const entry = { tools: new Map(tools.map((t) => [t.def.name, t])), listing: tools.map((t) => t.listed) };
  prepared.set(key, entry);
  return entry;
}

/**
 * A tool's hints without what the MCP specification already implies: destructive and idempotent
 * mean something only for a tool that writes (readOnlyHint false), and idempotent false is the
 * default. destructiveHint (default true) and openWorldHint (default true) are always said.
 */
function annotationsOf(def: ToolDef): Tool['annotations'] {
  if (!def.writes) return { readOnlyHint: true, openWorldHint: false };
  return { readOnlyHint: false, destructiveHint: Boolean(def.destructive), ...(def.idempotent ? { idempotentHint: true } : {}), openWorldHint: false };
}

/**
 * One JSON Schema validator for every server: the SDK otherwise builds an Ajv instance per
 * server, which was three quarters of the cost of a stateless request's server (160 -> 40 µs).
 * This server never validates anything with it (it sends no elicitation requests).
 */
const sharedValidator = new AjvJsonSchemaValidator();

const toolsByName = new Map(allTools.map((t) => [t.name, t]));

/**
 * The one place a tools/call is admitted: a tool of this connection runs (runTool validates its
 * arguments and calls the core); a tool that exists but not here is an `isError` result, 403
 * `tool_not_available` saying why, so an assistant can tell the user; a name that is no tool at
 * all is the protocol error the MCP spec names for it (-32602, "Unknown tool").
 */
export async function callTool(ctx: Ctx, surface: Surface, opts: McpOptions, name: string, args: unknown, logError?: ToolErrorLog): Promise<CallToolResult> {
  const here = prepareSurface(surface, opts).tools.get(name);
  if (here) return runTool(here.def, ctx, surface, args, here.input, logError);
  const tool = toolsByName.get(name);
  const refusal = tool && refusalFor(tool, surface, opts);
  if (!tool || !refusal)
    throw new ProtocolError(ErrorCode.InvalidParams, `Unknown tool: ${name.slice(0, 100)}. tools/list names the tools of this connection.`);
  return errorResult(toolNotAvailable(tool, refusal));
}

/**
 * An MCP server for one verified principal (a stateless HTTP request or a stdio process). The
 * low-level Server with our own tools/list and tools/call handlers: McpServer's registerTool
 * would convert schemas on every request, validate arguments into plain-text errors, answer a
 * tool it does not hold with an error carrying no code, and advertise `tools.listChanged`,
 * a notification this server never sends (tools are fixed for a connection's life).
 */
export function buildMcpServer(makeCtx: (p: Principal) => Ctx, principal: Principal, opts: McpOptions, logError?: ToolErrorLog): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: {}, resources: {}, prompts: {}, completions: {} },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: sharedValidator,
  });
  const surface = surfaceOf(principal);
  const { listing } = prepareSurface(surface, opts);
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listing }));
  server.setRequestHandler(CallToolRequestSchema, async ({ params }) => {
    try {
      return await callTool(makeCtx(principal), surface, opts, params.name, params.arguments, logError);
    } catch (err) {
      // the SDK would answer -32603 with the exception's message; only our protocol errors go out as such
      if (err instanceof ProtocolError) throw err;
      logError?.(err, params.name);
      return internalResult();
    }
  });
  server.setRequestHandler(ListResourcesRequestSchema, ({ params }) => guarded(() => listResources(makeCtx(principal), params?.cursor), logError));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates }));
  server.setRequestHandler(ReadResourceRequestSchema, ({ params }) => guarded(() => readResource(makeCtx(principal), params.uri), logError));
  // prompts and their arguments' completions (prompts.ts): what the connection's token can do decides which exist
  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: listPrompts(surface, opts) }));
  server.setRequestHandler(GetPromptRequestSchema, ({ params }) =>
    guarded(async () => getPrompt(surface, opts, params.name, params.arguments, makeCtx(principal).now()), logError),
  );
  server.setRequestHandler(CompleteRequestSchema, ({ params: { ref, argument } }) => {
    // resource templates take ids nobody types by hand: nothing to suggest
    if (ref.type !== 'ref/prompt') return { completion: { values: [] } };
    return guarded(() => completePrompt(makeCtx(principal), surface, opts, ref.name, argument.name, argument.value), logError);
  });
  return server;
}

/**
 * A resource request's answer: our protocol errors go out as they are; anything else is a bug,
 * logged and answered -32603 without its message (which may quote SQL).
 */
async function guarded<T>(run: () => Promise<T>, logError?: ToolErrorLog): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof ProtocolError) throw err;
    logError?.(err, 'resources');
    throw new ProtocolError(ErrorCode.InternalError, 'Something went wrong; the error was logged.');
  }
}
