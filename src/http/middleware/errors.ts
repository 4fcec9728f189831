import type { Context, Middleware } from 'koa';
import { AppError } from '../../core/errors.ts';
import { toAppError } from '../../core/failures.ts';
import type { Logger } from '../../log.ts';

export interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

/**
 * A status set with no body by routing: nothing matched (404), or @koa/router's allowedMethods
 * refused the method (405, or 501 for a method no router implements, such as TRACE or
 * PROPFIND). A method the path does not take is 405 `method_not_allowed` with `Allow`; a path
 * that takes no method at all is 404 whatever the method.
 */
function routingRefusal(ctx: Context): AppError | null {
  if (ctx.body !== undefined || ![404, 405, 501].includes(ctx.status)) return null;
  const allow = ctx.response.get('Allow');
  if (ctx.status !== 404 && allow) {
    const allowed = allow.split(',').map((m) => m.trim());
    return new AppError(
      'method_not_allowed',
      `${ctx.method} is not allowed here; use ${allowed.join(', ')}.`,
      { method: ctx.method, allowed },
      { Allow: allow },
    );
  }
  ctx.remove('Allow');
  return new AppError('not_found', 'No such route.', { reason: 'unknown_route' });
}

/** The one place errors become responses; anything unexpected is a 500 with no internals in the body. */
export function errorEnvelope(log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      const refusal = routingRefusal(ctx);
      if (refusal) throw refusal;
    } catch (err) {
      let e = toAppError(err);
      if (!e) {
        log.error({ err, requestId: ctx.state.requestId, method: ctx.method, path: ctx.path }, 'unhandled error');
        e = new AppError('internal', `Something went wrong. Quote request id ${String(ctx.state.requestId)} when reporting it.`);
      }
      ctx.status = e.status;
      for (const [k, v] of Object.entries(e.headers)) ctx.set(k, v);
      const body: ErrorBody = { error: { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) } };
      ctx.body = body;
    }
  };
}
