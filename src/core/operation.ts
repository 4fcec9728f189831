import type { z } from 'zod';
import { authorize } from './access/authorize.ts';
import type { Action } from './access/actions.ts';
import type { Db } from '../db/connect.ts';
import { tx, type Ctx } from './ctx.ts';
import { audited } from './ops/audit.ts';
import { parseInput } from './validation.ts';

/**
 * One operation of the service, declared once (sentry-mcp's `defineTool`, Outline's commands with
 * their policies): what it is called, the action of the permission table it needs, its input and
 * output schemas, whether it runs in one transaction, what the audit log records of it, and `run`,
 * typed by the input schema. Every door (REST, MCP, console, CLI, jobs) names the operation and
 * hands `runOp` its input; none authorizes, parses or audits on its own.
 */
export interface Operation<S extends z.ZodType = z.ZodType, R = unknown> {
  readonly kind: 'operation';
  /** Unique, dotted like the actions (`time.edit`); what logs and the door walk name. */
  readonly name: string;
  /** The row of the action table (src/core/access/actions.ts) `runOp` authorizes before anything else. */
  readonly action: Action;
  /** The input, parsed by `runOp` after authorizing (so a caller without the scope gets 403, not 400). */
  readonly input: S;
  /** The result as the contract describes it (the REST body; MCP tools shape their own). */
  readonly output: z.ZodType | null;
  /** `run` inside one transaction (the audit row is written after it, on the pool, so a rollback keeps it). */
  readonly tx?: boolean;
  /** Recorded in the audit log with the caller and their door, refusals and failures too. */
  readonly audit?: OperationAudit<z.output<S>, R>;
  /** The rule itself: input already authorized (as far as the action alone decides) and parsed. */
  readonly run: (ctx: Ctx, input: z.output<S>) => Promise<R>;
}

export interface OperationAudit<I, R> {
  /** The audit log's action (`billing.run.void`); a function of the input as sent when the input names it (a grant or a withdrawal). */
  action: string | ((sent: Partial<Record<keyof I, unknown>>) => string);
  /** What was acted on, from the input as sent (a refusal is recorded before the input is parsed). */
  target: (sent: Partial<Record<keyof I, unknown>>) => string | null;
  /** A line of detail for a success (the void's reason). */
  detail?: (input: I, result: R) => string | null;
}

/** Any operation, whatever its input and result (what a door's table holds). */
export type AnyOperation = Operation<any, any>;
export type OperationInput<O extends AnyOperation> = z.input<O['input']>;
export type OperationResult<O extends AnyOperation> = Awaited<ReturnType<O['run']>>;

/** Declares an operation (the identity, with the kind that marks it for the door walk). */
export function defineOp<S extends z.ZodType, R>(def: Omit<Operation<S, R>, 'kind'>): Operation<S, R> {
  return Object.freeze({ ...def, kind: 'operation' as const });
}

export const isOperation = (x: unknown): x is AnyOperation =>
  typeof x === 'object' && x !== null && (x as { kind?: unknown }).kind === 'operation' && typeof (x as { run?: unknown }).run === 'function';

/**
 * Runs an operation the one way every door does: authorize its action, parse its input, run it
 * (in a transaction when it declares one), and record it in the audit log when it declares an
 * audit. Typed: a door that builds the input in code (MCP, console, CLI, jobs, another operation)
 * is checked by the compiler; what arrives off the wire goes through `runOpSent`.
 */
export function runOp<O extends AnyOperation>(op: O, ctx: Ctx, input: OperationInput<O>): Promise<OperationResult<O>> {
  return runOpSent(op, ctx, input);
}

/**
 * `runOp` for input as it arrived (a REST body and path merged, a test's deliberately wrong
 * value): the operation's own schema decides what it is.
 */
export function runOpSent<O extends AnyOperation>(op: O, ctx: Ctx, sent: unknown): Promise<OperationResult<O>> {
  const audit = op.audit as OperationAudit<unknown, unknown> | undefined;
  if (!audit) return execute(op, ctx, sent);
  const fields = (typeof sent === 'object' && sent !== null ? sent : {}) as Record<string, unknown>;
  let parsed: unknown;
  return audited(
    ctx,
    typeof audit.action === 'function' ? audit.action(fields) : audit.action,
    audit.target(fields),
    (ctx) => execute(op, ctx, sent, (input) => (parsed = input)),
    audit.detail ? (r) => audit.detail!(parsed, r) : undefined,
  );
}

async function execute<O extends AnyOperation>(op: O, ctx: Ctx, sent: unknown, parsed?: (input: unknown) => void): Promise<OperationResult<O>> {
  authorize(ctx, op.action);
  const input = parseInput(op.input, sent);
  parsed?.(input);
  return (op.tx ? tx(ctx, (t) => op.run(t, input)) : op.run(ctx, input)) as Promise<OperationResult<O>>;
}

/**
 * An operation that runs before there is a principal (login, re-authentication, an invitation's
 * or a reset's link): declared like the others, with a typed input parsed once by `runPublicOp`,
 * but run with its own context (a login's, a session's) instead of a `Ctx`. There is no action to
 * authorize: the credential (a password, a link's secret, the session) is what `run` checks, and
 * the throttle is its own business, as is anything it checks about a session.
 */
export interface PublicOperation<C extends { sql: Db } = { sql: Db }, S extends z.ZodType = z.ZodType, R = unknown> {
  readonly kind: 'public-operation';
  /** Unique, dotted like the others (`auth.login`). */
  readonly name: string;
  /** The input, parsed by `runPublicOp` before `run` (a malformed one is 400 before any throttle counts it). */
  readonly input: S;
  /** The result as the contract describes it; null where the door shapes the body (a session's secret becomes a cookie). */
  readonly output: z.ZodType | null;
  /** `run` inside one transaction (its context's `sql` is the transaction's). */
  readonly tx?: boolean;
  readonly run: (ctx: C, input: z.output<S>) => Promise<R>;
}

export type AnyPublicOperation = PublicOperation<any, any, any>;
export type PublicOperationCtx<O extends AnyPublicOperation> = Parameters<O['run']>[0];
export type PublicOperationResult<O extends AnyPublicOperation> = Awaited<ReturnType<O['run']>>;

/** Declares an operation that runs before there is a principal. */
export function definePublicOp<C extends { sql: Db }, S extends z.ZodType, R>(def: Omit<PublicOperation<C, S, R>, 'kind'>): PublicOperation<C, S, R> {
  return Object.freeze({ ...def, kind: 'public-operation' as const });
}

export const isPublicOperation = (x: unknown): x is AnyPublicOperation =>
  typeof x === 'object' && x !== null && (x as { kind?: unknown }).kind === 'public-operation' && typeof (x as { run?: unknown }).run === 'function';

/**
 * Runs a public operation the one way every door does: parse its input (as sent: a REST body, a
 * console form), then run it, in a transaction when it declares one. No authorize: there is no
 * principal yet.
 */
export async function runPublicOp<O extends AnyPublicOperation>(op: O, ctx: PublicOperationCtx<O>, sent: unknown): Promise<PublicOperationResult<O>> {
  const input = parseInput(op.input, sent);
  if (!op.tx) return op.run(ctx, input) as Promise<PublicOperationResult<O>>;
  return ctx.sql.begin((t: unknown) => op.run({ ...ctx, sql: t as Db }, input)) as Promise<PublicOperationResult<O>>;
}
