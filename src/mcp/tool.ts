import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Principal } from '../core/auth/principal.ts';
import type { Ctx } from '../core/ctx.ts';
import { AppError } from '../core/errors.ts';
import { toAppError } from '../http/middleware/errors.ts';

export const toolsets = ['tickets', 'board', 'time', 'documents', 'context', 'workflow'] as const;
export type Toolset = (typeof toolsets)[number];

/** What a token lets a connection see: it shapes which tools exist and which arguments they take. */
export interface Surface {
  principal: Principal;
  canWrite: boolean;
  /** Inbox arguments exist only with triage (and no allow-list). */
  inbox: boolean;
  /** A token's allow-list: project arguments default to and are limited to these. */
  projectIds: readonly string[] | null;
}

export interface ToolDef<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  /** Written for a model: what the tool is for, when to use it, what it returns. */
  description: string;
  toolset: Toolset;
  /** Needs the write scope; hidden on read-only connections. */
  writes: boolean;
  destructive?: boolean;
  idempotent?: boolean;
  /** The input schema for this connection's surface (arguments a token cannot use are left out). */
  input: (surface: Surface) => I;
  output: O;
  run: (ctx: Ctx, args: z.output<I>, surface: Surface) => Promise<z.input<O>>;
}

/** Keeps the generic types of one tool while collecting tools of different shapes in one list. */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(def: ToolDef<I, O>): ToolDef {
  return def as unknown as ToolDef;
}

/** The contract's error, as a tool result: `isError` with the REST code, reason and details. */
export function errorResult(e: AppError): CallToolResult {
  const structured = { code: e.code, reason: e.reason ?? null, message: e.message, details: e.details ?? {} };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}

/**
 * Runs one tool call: validates the arguments with the tool's own schema (so a bad argument is an
 * `invalid` result like REST's 400, not a protocol error), calls the core, and returns the result
 * both as structuredContent and as its JSON text for clients that read only text.
 */
export async function runTool(tool: ToolDef, ctx: Ctx, surface: Surface, rawArgs: unknown): Promise<CallToolResult> {
  try {
    const args = tool.input(surface).parse(rawArgs ?? {});
    const out = tool.output.parse(await tool.run(ctx, args, surface)) as Record<string, unknown>;
    return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
  } catch (err) {
    const e = toAppError(err);
    if (e) return errorResult(e);
    throw err;
  }
}
