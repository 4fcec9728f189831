import type { Context, Middleware } from 'koa';
import { ZodError } from 'zod';
import { AppError, unavailable } from '../../core/errors.ts';
import { isConnectionError } from '../../db/connect.ts';
import type { Logger } from '../../log.ts';

export interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

/** Turns a zod failure into the contract's 400: the first failing field, its reason, and all issues. */
export function fromZod(err: ZodError): AppError {
  const first = err.issues[0]!;
  const field = first.path.map(String).join('.') || undefined;
  return new AppError('invalid', field ? `${field}: ${first.message}` : first.message, {
    reason: 'validation',
    ...(field ? { field } : {}),
    issues: err.issues.slice(0, 20).map((i) => ({ path: i.path.map(String).join('.'), code: i.code, message: i.message })),
  });
}

/** Errors raised by the body parser and Koa itself, mapped to the envelope. */
function fromHttpError(err: { status?: number; type?: string; message?: string }): AppError | null {
  if (err.type === 'entity.too.large' || err.status === 413)
    return new AppError('payload_too_large', 'The request body is too large.', { reason: 'body_too_large' });
  // co-body marks a body that is not JSON as a 400 SyntaxError carrying the raw body
  if (err.type === 'entity.parse.failed' || (err.status === 400 && (err instanceof SyntaxError || 'body' in err)))
    return new AppError('invalid', 'The request body is not valid JSON.', { reason: 'bad_json' });
  if (err.status === 415) return new AppError('unsupported_media_type', 'Send JSON with Content-Type: application/json.', { reason: 'content_type' });
  if (err.status && err.status >= 400 && err.status < 500) return new AppError('invalid', 'The request is not valid.', { reason: 'bad_request' });
  return null;
}

export function toAppError(err: unknown): AppError | null {
  if (err instanceof AppError) return err;
  if (err instanceof ZodError) return fromZod(err);
  // The database is down or restarting: 503 with Retry-After, not a 500 (issue 9).
  if (isConnectionError(err)) return unavailable();
  if (err && typeof err === 'object') return fromHttpError(err as { status?: number; type?: string });
  return null;
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
