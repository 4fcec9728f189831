import type { Json } from './json-schema.ts';
import type { Reasons } from './reasons.ts';

const CODE_OF: Record<number, string> = {
  400: 'invalid',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  412: 'precondition_failed',
};

const ERROR = { $ref: '#/components/schemas/Error' };

/** The envelope with its code fixed and, where the contract names them, `details.reason` one of `reasons`. */
function envelope(status: number, reasons: string[]): Json {
  const details = reasons.length ? { details: { properties: { reason: { enum: reasons } } } } : {};
  return {
    allOf: [ERROR, { properties: { error: { properties: { code: { const: CODE_OF[status] }, ...details } } } }],
  };
}

const json = (schema: Json) => ({ 'application/json': { schema } });

/**
 * A route's error responses: the statuses with known reasons, 401 for an authenticated route, and
 * `default` (the envelope, any other code: 413, 415, 422, 429, 500, 503) for all.
 */
export function errorResponses(reasons: Reasons, authenticated: boolean): Json {
  const out: Json = {};
  for (const [status, list] of Object.entries(reasons)) {
    out[status] = { description: `\`${CODE_OF[Number(status)]}\`.`, content: json(envelope(Number(status), [...new Set(list)])) };
  }
  if (authenticated) out[401] = { description: '`unauthenticated`: no valid token or session.', content: json(envelope(401, [])) };
  out.default = { description: 'Any other error, in the envelope.', content: json(ERROR) };
  return out;
}
