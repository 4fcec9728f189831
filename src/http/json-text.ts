import type { Context } from 'koa';
import { isJsonText } from '../core/json-text.ts';

/**
 * An operation's result as the response body: JSON text a read already holds (core/json-text.ts)
 * goes out as it is, with the type Koa gives a JSON body; anything else Koa serialises.
 */
export function sendResult(ctx: Context, result: unknown): void {
  if (isJsonText(result)) {
    ctx.type = 'application/json';
    ctx.body = result.jsonText;
  } else ctx.body = result;
}
