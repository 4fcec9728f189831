import type { Next } from 'koa';
import { invalid } from '../../core/errors.ts';
import { fingerprintOf, parseIdempotencyKey, runIdempotent, type StoredResponse } from '../../core/idempotency/keys.ts';
import type { AppContext, AppDeps } from '../context.ts';
import { errorEnvelope } from './errors.ts';
import { clockOf } from '../../core/ctx.ts';

const HEADER = 'idempotency-key';
/** Response headers that belong to the answer and are replayed with it. */
const KEPT_HEADERS = ['content-type', 'etag', 'location'];

/** Whether this request asks for idempotency: a token POST with the header (even an empty one, which is refused). */
export const wantsIdempotency = (ctx: AppContext) => ctx.method === 'POST' && ctx.state.principal?.via === 'token' && ctx.request.headers[HEADER] !== undefined;

function stored(ctx: AppContext): StoredResponse {
  const b: unknown = ctx.body;
  // every POST route answers JSON; anything else (none today) is kept without a body
  const body =
    b === undefined || b === null
      ? null
      : typeof b === 'string'
        ? b
        : Buffer.isBuffer(b) || typeof (b as { pipe?: unknown }).pipe === 'function'
          ? null
          : JSON.stringify(b);
  const headers: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const v = ctx.response.get(name);
    if (typeof v === 'string' && v) headers[name] = v;
  }
  return { status: ctx.status, body, headers };
}

/**
 * Runs a token POST carrying `Idempotency-Key` at most once per token and key: the route runs
 * inside the key's transaction (ctx.state.tx, joined by every core operation), its response,
 * errors included, is rendered here so it can be stored, and a replay answers the stored status
 * and body with `Idempotent-Replayed: true`. Uploads (multipart) are refused a key: their body
 * is parsed by the route, after this point, so it cannot be compared.
 */
export async function idempotent(deps: AppDeps, ctx: AppContext, next: Next): Promise<void> {
  const key = parseIdempotencyKey(String(ctx.request.headers[HEADER]));
  if (ctx.is('multipart/form-data')) {
    throw invalid('idempotency_unsupported', { field: 'Idempotency-Key' }, 'Uploads do not take an Idempotency-Key.');
  }
  const principal = ctx.state.principal!;
  const fingerprint = fingerprintOf(ctx.method, ctx.url, JSON.stringify(ctx.request.body ?? null));
  const render = errorEnvelope(deps.log);
  const now = clockOf(deps)();
  const { response, replayed } = await runIdempotent(deps.sql, { tokenId: principal.tokenId!, key, fingerprint }, now, async (tx) => {
    ctx.state.tx = tx;
    try {
      await render(ctx, next);
    } finally {
      ctx.state.tx = undefined;
    }
    return stored(ctx);
  });
  if (!replayed) return; // ctx holds the response that was just produced
  ctx.status = response.status;
  for (const [name, value] of Object.entries(response.headers)) ctx.set(name, value);
  ctx.set('Idempotent-Replayed', 'true');
  ctx.body = response.body ?? null;
}
