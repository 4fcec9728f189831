import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import { AppError } from '../../core/errors.ts';
import { assertSupportedEncoding } from './input.ts';
import { API_VERSION } from '../openapi/version.ts';

/**
 * The headers every response carries, errors included (mounted before the error envelope):
 * X-Request-Id (the caller's when it is sane, else a new one), API-Version, the security headers,
 * and `Cache-Control: no-store` unless the route set its own. One middleware rather than one per
 * header family: every layer costs every request a promise and a bound `next`.
 */
export const responseHeaders: Middleware = async (ctx, next) => {
  const given = ctx.get('x-request-id');
  const id = REQUEST_ID.test(given) ? given : randomUUID();
  ctx.state.requestId = id;
  ctx.set('X-Request-Id', id);
  ctx.set('API-Version', API_VERSION);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Frame-Options', 'DENY');
  await next();
  if (!ctx.response.get('Cache-Control')) ctx.set('Cache-Control', 'no-store');
};

const REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * A request body must be JSON (multipart only where a route accepts uploads), plain or in a
 * content coding the parser inflates; anything else is 415.
 */
export const jsonOnly: Middleware = async (ctx, next) => {
  if (BODY_METHODS.has(ctx.method) && (Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '')) {
    if (!ctx.is('application/json', 'multipart/form-data')) {
      throw new AppError('unsupported_media_type', 'Send JSON with Content-Type: application/json.', { reason: 'content_type' });
    }
    assertSupportedEncoding(ctx);
  }
  await next();
};
