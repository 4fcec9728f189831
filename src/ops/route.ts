import type { Ctx } from '../core/ctx.ts';
import type { Principal } from '../core/auth/principal.ts';

/**
 * What a console page is: the request a handler gets, the answer it gives, its route. The pages
 * (src/ops/pages) and the console that mounts them (console.ts) both read this file.
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
  options: ConsoleOptions;
  /** Re-authenticates the session with the password a destructive form asked for, in the page (the ten-minute window). */
  reauth: (password: string) => Promise<void>;
}

/** A page answer: HTML, or a redirect after a form post (303, so a reload does not post again). */
export type Answer = { page: string; status?: number } | { redirect: string };
export type Handler = (r: OpsRequest) => Promise<Answer>;
export interface OpsRoute {
  method: 'GET' | 'POST';
  path: string;
  handler: Handler;
}

/** `path` with a notice or error message for the page it leads to. */
export function withMessage(path: string, kind: 'msg' | 'err', message: string): string {
  const u = new URL(path, 'http://x');
  u.searchParams.set(kind, message);
  return u.pathname + u.search;
}
