import { toolNotAvailable as refuseTool } from '../core/access/refusals.ts';
import type { AppError } from '../core/errors.ts';
import type { McpOptions } from './options.ts';
import { allTools } from './registry.ts';
import type { Surface, ToolDef } from './tool.ts';

/** Why a tool is missing from a connection: a machine-readable cause and a sentence for the caller. */
export interface Refusal {
  cause: 'missing_scope' | 'readonly_connection' | 'toolset_not_selected' | string;
  message: string;
  extra?: Record<string, unknown>;
}

/**
 * Why `tool` is not on this connection, or null when it is. The token decides first (scopes,
 * role), then the connection narrows (read-only, toolsets). tools/list and tools/call both ask
 * this, so the listing and a refused call never disagree.
 */
export function refusalFor(tool: ToolDef, surface: Surface, opts: McpOptions): Refusal | null {
  if (!surface.principal.scopes.has('read'))
    return { cause: 'missing_scope', extra: { scope: 'read' }, message: 'this token lacks the read scope, which every tool needs' };
  if (tool.writes && !surface.canWrite)
    return { cause: 'missing_scope', extra: { scope: 'write' }, message: 'it changes data and this token is read-only (it lacks the write scope)' };
  if (tool.available && !tool.available.test(surface)) return { cause: tool.available.cause, message: tool.available.message };
  if (tool.writes && opts.readonly)
    return { cause: 'readonly_connection', message: 'it changes data and this connection is read-only (readonly was set when connecting)' };
  if (opts.toolsets && !opts.toolsets.has(tool.toolset)) {
    const selected = [...opts.toolsets];
    return {
      cause: 'toolset_not_selected',
      extra: { toolset: tool.toolset, toolsets: selected },
      message: `it is in the "${tool.toolset}" toolset and this connection selected only ${selected.join(', ')}`,
    };
  }
  return null;
}

/** The tools this connection may call. */
export function availableTools(surface: Surface, opts: McpOptions, tools: ToolDef[] = allTools): ToolDef[] {
  return tools.filter((t) => refusalFor(t, surface, opts) === null);
}

/** A call of a tool that exists but not on this connection: 403 `tool_not_available`, saying why. */
export function toolNotAvailable(tool: ToolDef, refusal: Refusal): AppError {
  return refuseTool(tool.name, refusal);
}
