import { can } from '../core/access/authorize.ts';
import { toolNotAvailable as refuseTool, toolRefusalOf } from '../core/access/refusals.ts';
import type { AppError } from '../core/errors.ts';
import type { McpOptions } from './options.ts';
import { allTools } from './registry.ts';
import type { Surface, ToolDef } from './tool.ts';

/** Why a tool is missing from a connection: a machine-readable cause and a sentence for the caller. */
export interface Refusal {
  cause: 'missing_scope' | 'client_user' | 'session_required' | 'admin_only' | 'readonly_connection' | 'toolset_not_selected' | string;
  message: string;
  extra?: Record<string, unknown>;
}

/**
 * Why `tool` is not on this connection, or null when it is. The token decides first: every tool
 * answers with data, so a connection needs the read scope; then the core says whether the token
 * can ever perform the tool's action (scope, session, workspace users, role). The connection
 * narrows last (read-only, toolsets). tools/list and tools/call both ask this, so the listing and
 * a refused call never disagree.
 */
export function refusalFor(tool: ToolDef, surface: Surface, opts: McpOptions): Refusal | null {
  const p = surface.principal;
  if (!p.scopes.has('read')) return { cause: 'missing_scope', extra: { scope: 'read' }, message: 'this token lacks the read scope, which every tool needs' };
  const refused = can(p, tool.action);
  if (refused) return toolRefusalOf(refused);
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
