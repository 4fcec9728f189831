/**
 * The one error vocabulary of the service. Core operations throw these; the HTTP
 * middleware and the MCP adapter turn them into the contract's envelope.
 */
export type ErrorCode =
  | 'invalid'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'method_not_allowed'
  | 'precondition_failed'
  | 'idempotency_mismatch'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal'
  | 'unavailable';

const statusOf: Record<ErrorCode, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  precondition_failed: 412,
  idempotency_mismatch: 422,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
};

export type ErrorDetails = { reason?: string } & Record<string, unknown>;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetails | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, details?: ErrorDetails, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.status = statusOf[code];
    this.details = details && Object.keys(details).length > 0 ? details : undefined;
    this.headers = headers;
  }

  get reason(): string | undefined {
    return this.details?.reason;
  }
}

function withReason(reason: string | undefined, extra: Record<string, unknown> | undefined): ErrorDetails | undefined {
  if (!reason && !extra) return undefined;
  return { ...(reason ? { reason } : {}), ...extra };
}

export const invalid = (reason?: string, extra?: Record<string, unknown>, message = 'The request is not valid.') =>
  new AppError('invalid', message, withReason(reason, extra));

export const unauthenticated = (message = 'Authentication is required.') =>
  new AppError('unauthenticated', message, undefined, { 'WWW-Authenticate': 'Bearer realm="worktracker"' });

export const forbidden = (reason?: string, extra?: Record<string, unknown>, message = 'You are not allowed to do this.') =>
  new AppError('forbidden', message, withReason(reason, extra));

export const notFound = (reason?: string, extra?: Record<string, unknown>, message = 'Not found.') =>
  new AppError('not_found', message, withReason(reason, extra));

export const conflict = (reason: string, extra?: Record<string, unknown>, message = 'The request conflicts with the current state.') =>
  new AppError('conflict', message, withReason(reason, extra));

export const preconditionFailed = (etag: string) =>
  new AppError('precondition_failed', 'The resource changed since you read it.', { reason: 'etag_mismatch', etag }, { ETag: etag });

/** The database cannot be reached (down, restarting); a retry later may succeed (safely so with an Idempotency-Key). */
export const unavailable = (retryAfterSeconds = 5) =>
  new AppError(
    'unavailable',
    'The service is temporarily unavailable; retry shortly.',
    { reason: 'database_unavailable' },
    {
      'Retry-After': String(retryAfterSeconds),
    },
  );

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;
