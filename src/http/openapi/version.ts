import type { Middleware } from 'koa';

/**
 * The REST API's version: the OpenAPI document's `info.version` and every response's
 * `API-Version`. Within a major version changes are additive only (docs/decisions.md).
 */
export const API_VERSION = '1.0.0';

/** Sets `API-Version` on every response, errors included (mounted before the error envelope). */
export const apiVersion: Middleware = async (ctx, next) => {
  ctx.set('API-Version', API_VERSION);
  await next();
};
