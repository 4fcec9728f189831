import type { Ctx } from '../core/ctx.ts';
import type { Principal } from '../core/auth/principal.ts';
import type { AnyOperation, OperationInput, OperationResult } from '../core/operation.ts';
import { safeNext as webSafeNext } from '../web/session.ts';

/**
 * What a console page and a console action are: the request they get, the answer they give, their
 * route. The pages (src/ops/pages) and the console that mounts them (console.ts) both read this file.
 */

export interface ConsoleOptions {
  /** The process's crontab (graphile-worker format), for the crontab view and "run now". */
  crontab: string;
  /** The local SMTP catcher's folder; null when mail goes to a real SMTP server. */
  outboxDir: string | null;
}

/** What a console page handler gets: the core context of the signed-in operator and the request. */
export interface OpsRequest {
  ctx: Ctx;
  principal: Principal;
  csrf: string;
  /** Owner or Admin: action buttons are shown. */
  canAct: boolean;
  query: Record<string, string>;
  body: Record<string, string>;
  params: Record<string, string>;
  path: string;
  /** Re-authenticates the session with the password a destructive form asked for, in the page (the ten-minute window). */
  reauth: (password: string) => Promise<void>;
}

/** A page answer: HTML, or a redirect after a form post (303, so a reload does not post again). */
export type Answer = { page: string; status?: number } | { redirect: string };
export type Handler = (r: OpsRequest) => Promise<Answer>;

/** A page: HTML over what it reads, every read through `runOp` (the operation authorizes it). */
export interface ConsolePage {
  method: 'GET';
  path: string;
  page: Handler;
}

/**
 * A console action: a form post that runs one operation. The console's one dispatcher
 * (console.ts) asks what the form asks before it (the password, a typed word), runs `op` through
 * `runOp` with the input `sent` builds from the form and path, and answers with `answer`'s
 * redirect; a refusal goes back to the page with its message.
 */
export interface ConsoleAction<O extends AnyOperation = AnyOperation> {
  method: 'POST';
  path: string;
  op: O;
  /** The operation's input, from the form (`r.body`) and the path (`r.params`): typed by the operation. */
  sent: (r: OpsRequest) => OperationInput<O>;
  /** A destructive form asks for the password: when typed, it re-authenticates the session first. */
  reauth?: true;
  /** A form with one file input (multipart): the file reaches `sent` base64-encoded in `r.body[field]` (upload.ts). */
  upload?: { field: string };
  /**
   * A word the operator types to confirm (`VOID`): asked of someone the operation would let
   * through (a refusal comes first, from the operation, and is audited); a mismatch runs nothing.
   */
  confirm?: { field: string; word: string; message: string };
  /** Where the browser goes next, with the notice saying what happened. */
  answer: (result: OperationResult<O>, r: OpsRequest) => Answer;
}

/** Declares a console action (the identity, typing `sent` and `answer` by the operation). */
export const defineAction = <O extends AnyOperation>(a: ConsoleAction<O>): ConsoleAction<O> => a;

export type OpsRoute = ConsolePage | ConsoleAction;

/** `path` with a notice or error message for the page it leads to. */
export function withMessage(path: string, kind: 'msg' | 'err', message: string): string {
  const u = new URL(path, 'http://x');
  u.searchParams.set(kind, message);
  return u.pathname + u.search;
}

/** A console path to go back to (`?next=`, a form's `_back`): a path under /ops only, never another site; else `fallback`. */
export const safeNext = (v: unknown, fallback = '/ops/jobs'): string => webSafeNext(v, '/ops', fallback);
