import { ZodError } from 'zod';
import { isConnectionError } from '../db/connect.ts';
import { AppError, unavailable } from './errors.ts';

/** Turns a zod failure into the contract's 400: the first failing field, its reason, and all issues. */
function fromZod(err: ZodError): AppError {
  const first = err.issues[0]!;
  const field = first.path.map(String).join('.') || undefined;
  return new AppError('invalid', field ? `${field}: ${first.message}` : first.message, {
    reason: 'validation',
    ...(field ? { field } : {}),
    issues: err.issues.slice(0, 20).map((i) => ({ path: i.path.map(String).join('.'), code: i.code, message: i.message })),
  });
}

/**
 * Failures of reading a request body (the body parser both HTTP-speaking adapters share: REST
 * and MCP over HTTP), mapped to the contract's codes by their HTTP status.
 */
function fromBodyReadError(err: { status?: number; type?: string; message?: string }): AppError | null {
  if (err.type === 'entity.too.large' || err.status === 413)
    return new AppError('payload_too_large', 'The request body is too large.', { reason: 'body_too_large' });
  // co-body marks a body that is not JSON as a 400 SyntaxError carrying the raw body
  if (err.type === 'entity.parse.failed' || (err.status === 400 && (err instanceof SyntaxError || 'body' in err)))
    return new AppError('invalid', 'The request body is not valid JSON.', { reason: 'bad_json' });
  if (err.status === 415) return new AppError('unsupported_media_type', 'Send JSON with Content-Type: application/json.', { reason: 'content_type' });
  if (err.status && err.status >= 400 && err.status < 500) return new AppError('invalid', 'The request is not valid.', { reason: 'bad_request' });
  return null;
}

/**
 * Anything thrown, as the contract's error; null for a bug (every adapter answers that as
 * `internal` without the exception's text, which may quote SQL, and logs it).
 */
export function toAppError(err: unknown): AppError | null {
  if (err instanceof AppError) return err;
  if (err instanceof ZodError) return fromZod(err);
  // The database is down or restarting: 503 with Retry-After, not a 500 (issue 9).
  if (isConnectionError(err)) return unavailable();
  if (err && typeof err === 'object') return fromBodyReadError(err as { status?: number; type?: string });
  return null;
}
