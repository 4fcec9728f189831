import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { canSeeInbox } from '../core/access/visible.ts';
import type { Action } from '../core/access/actions.ts';
import { requirementsOf } from '../core/access/authorize.ts';
import { isAdminRole, isClientRole, type Principal } from '../core/auth/principal.ts';
import type { Ctx } from '../core/ctx.ts';
import { AppError } from '../core/errors.ts';
import { assertCleanInput } from '../core/input.ts';
import { toAppError } from '../core/failures.ts';
import { runOp, type AnyOperation, type OperationInput, type OperationResult } from '../core/operation.ts';
import { idempotencyKeySchema } from '../core/idempotency/keys.ts';
import { runToolOnce } from './idempotent.ts';
import { summaryText } from './shapes.ts';

export const toolsets = ['tickets', 'board', 'time', 'documents', 'context', 'workflow'] as const;
export type Toolset = (typeof toolsets)[number];

/** What a token lets a connection see: it shapes which tools exist and which arguments they take. */
export interface Surface {
  principal: Principal;
  /** Inbox arguments exist only with triage (and no allow-list). */
  inbox: boolean;
  /** A token's allow-list: project arguments default to and are limited to these. */
  projectIds: readonly string[] | null;
}

export function surfaceOf(p: Principal): Surface {
  return { principal: p, inbox: canSeeInbox(p), projectIds: p.projectIds };
}

/**
 * Everything about a surface that changes a tool's schema or presence (what `can` and the input
 * schemas read: scopes, credential kind, role kind, allow-list): equal keys, equal tool lists.
 */
export function surfaceKey(s: Surface): string {
  const p = s.principal;
  const role = isClientRole(p.role) ? 'c' : isAdminRole(p.role) ? 'a' : 's';
  const scopes = [...p.scopes].sort().join('+');
  return `${scopes}|${p.via}|${role}|${s.inbox ? 'i' : '-'}:${s.projectIds ? [...s.projectIds].sort().join(',') : '*'}`;
}

export interface ToolDef<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject, Op extends AnyOperation = AnyOperation> {
  name: string;
  title: string;
  /** Written for a model: what the tool is for, when to use it, what it returns. */
  description: string;
  toolset: Toolset;
  /**
   * The core operation the tool runs (src/core/operation.ts); `runOp` authorizes, parses, runs
   * and audits it as for every other door.
   */
  op: Op;
  /**
   * The operation's action (set by defineTool from `op`): the token's scopes and role decide,
   * through the core's `can`, whether the tool exists on a connection.
   */
  readonly action: Action;
  /** Changes data: the action needs the write scope (derived by defineTool; read-only connections hide it). */
  readonly writes: boolean;
  destructive?: boolean;
  idempotent?: boolean;
  /** The input schema for this connection's surface (arguments a token cannot use are left out). */
  input: (surface: Surface) => I;
  output: O;
  /** Core error `details.field` -> this tool's argument name, where they differ (reported as `details.argument`). */
  fields?: Record<string, string>;
  /**
   * The operation's input from the tool's arguments (names resolved to ids, the tool's defaults);
   * typed by the operation's input schema.
   */
  args: (ctx: Ctx, args: z.output<I>, surface: Surface) => OperationInput<Op> | Promise<OperationInput<Op>>;
  /** The tool's result from the operation's (default: the operation's result as it is). */
  result?: (result: OperationResult<Op>, args: z.output<I>, ctx: Ctx) => z.input<O> | Promise<z.input<O>>;
  /**
   * The text content for clients that read only text: a short rendering, never a second copy of
   * the structured content's JSON; default: its top-level values (summaryText).
   */
  text?: (out: z.output<O>) => string;
  /**
   * The result's content blocks, from what `result` returned before the output schema dropped what it
   * does not declare (a file's body: get_document); default: one text block (see `text`).
   */
  content?: (result: Record<string, unknown>, out: z.output<O>) => CallToolResult['content'];
}

/** A tool as its file declares it: the action and `writes` follow from the operation. */
export type ToolSpec<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject, Op extends AnyOperation = AnyOperation> = Omit<
  ToolDef<I, O, Op>,
  'writes' | 'action'
>;

/** Keeps the generic types of one tool while collecting tools of different shapes in one list. */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject, Op extends AnyOperation>(spec: ToolSpec<I, O, Op>): ToolDef {
  const action = spec.op.action;
  const writes = requirementsOf(action).scope === 'write';
  return withIdempotencyKey({ ...spec, action, writes } as unknown as ToolDef);
}

/** Runs the tool's operation through `runOp` with the input its arguments make, and shapes the result. */
async function callOperation(tool: ToolDef, ctx: Ctx, args: Record<string, unknown>, surface: Surface): Promise<unknown> {
  const result = await runOp(tool.op, ctx, await tool.args(ctx, args, surface));
  return tool.result ? tool.result(result, args, ctx) : result;
}

/**
 * The contract's error, as a tool result: `isError` with the REST code, reason and details. Only
 * an AppError's own message and details go out (never an exception's text, which may quote SQL).
 */
export function errorResult(e: AppError, fields?: Record<string, string>): CallToolResult {
  const details: Record<string, unknown> = { ...e.details };
  const field = typeof details.field === 'string' ? details.field : null;
  if (field && fields) {
    const [head, ...rest] = field.split('.');
    const argument = fields[head!];
    if (argument) details.argument = [argument, ...rest].join('.');
  }
  const structured = { code: e.code, reason: e.reason ?? null, message: e.message, details };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}

/** A bug's answer: the caller learns only that it happened (the exception's text may quote SQL or carry a stack). */
export function internalResult(): CallToolResult {
  return errorResult(new AppError('internal', 'Something went wrong; the error was logged.'));
}

/** Where a tool's unexpected failure (a bug: REST's 500) is reported; the caller only learns that it happened. */
export type ToolErrorLog = (err: unknown, tool: string) => void;

/**
 * Runs one tool call: validates the arguments with the tool's own schema (so a bad argument is an
 * `invalid` result like REST's 400, not a protocol error), calls the core, and returns the result
 * as structuredContent plus a text rendering for clients that read only text. An unexpected error
 * is logged and answered as `internal`, without its message (which may quote SQL).
 * `input` is the tool's schema for the surface when the caller already built it (server cache).
 */
export async function runTool(
  tool: ToolDef,
  ctx: Ctx,
  surface: Surface,
  rawArgs: unknown,
  input: z.ZodObject = tool.input(surface),
  logError?: ToolErrorLog,
): Promise<CallToolResult> {
  try {
    // NUL and lone surrogates: the app-wide input rule (REST applies it to bodies and queries)
    assertCleanInput(rawArgs);
    const { idempotencyKey, ...args } = input.parse(rawArgs ?? {}) as Record<string, unknown>;
    if (typeof idempotencyKey === 'string') {
      const { idempotencyKey: _key, ...rest } = rawArgs as Record<string, unknown>;
      return await runToolOnce(ctx, tool.name, idempotencyKey, rest, (c) => runTool(tool, c, surface, rest, input, logError));
    }
    const result = (await callOperation(tool, ctx, args, surface)) as Record<string, unknown>;
    const out = tool.output.parse(result) as Record<string, unknown>;
    if (tool.content) return { content: tool.content(result, out), structuredContent: out };
    return { content: [{ type: 'text', text: tool.text ? tool.text(out) : summaryText(out) }], structuredContent: out };
  } catch (err) {
    const e = toAppError(err);
    if (e) return errorResult(e, tool.fields);
    logError?.(err, tool.name);
    return internalResult();
  }
}

/** Every write tool takes the optional `idempotencyKey` argument (REST's Idempotency-Key header). */
function withIdempotencyKey(def: ToolDef): ToolDef {
  if (!def.writes) return def;
  return { ...def, input: (surface) => def.input(surface).safeExtend({ idempotencyKey: idempotencyKeySchema.optional() }) };
}
