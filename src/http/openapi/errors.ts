import type { Json } from './json-schema.ts';
import { REASON_DETAILS, type Reasons } from './reasons.ts';

const CODE_OF: Record<number, string> = {
  400: 'invalid',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  412: 'precondition_failed',
};

const ERROR = { $ref: '#/components/schemas/Error' };

/**
 * The envelope with its code fixed and, where the contract names them, `details.reason` one of
 * `reasons`; `examples` name reasons without closing the list.
 */
function envelope(status: number, reasons: string[], examples: string[] = []): Json {
  const reason = reasons.length ? { enum: reasons } : examples.length ? { examples } : null;
  const extra = Object.assign({}, ...reasons.map((r) => REASON_DETAILS[r] ?? {})) as Json;
  const details = reason ? { details: { properties: { reason, ...extra } } } : {};
  return {
    allOf: [ERROR, { properties: { error: { properties: { code: { const: CODE_OF[status] }, ...details } } } }],
  };
}

const json = (schema: Json) => ({ 'application/json': { schema } });

/**
 * A route's error responses: the statuses with known reasons, 401 for an authenticated route, and
 * `default` (the envelope, any other code: 413, 415, 422, 429, 500, 503) for all. `pathMisses`
 * are the 404 reasons of the path itself (`unknown_workspace`, `unknown_route`): added to a route's
 * closed list of 404 reasons, or, where the route names none, a 404 that lists them as examples.
 */
export function errorResponses(reasons: Reasons, authenticated: boolean, pathMisses: string[] = []): Json {
  const out: Json = {};
  for (const [status, list] of Object.entries(reasons)) {
    const all = status === '404' && list.length ? [...list, ...pathMisses] : list;
    out[status] = { description: `\`${CODE_OF[Number(status)]}\`.`, content: json(envelope(Number(status), [...new Set(all)])) };
  }
  const open404 = !reasons[404]?.length && pathMisses.length > 0;
  if (open404) {
    const named = pathMisses.map((r) => `\`${r}\``).join(', ');
    out[404] = { description: `\`not_found\`: ${named}, or what the route could not find.`, content: json(envelope(404, [], pathMisses)) };
  }
  if (authenticated) out[401] = { description: '`unauthenticated`: no valid token or session.', content: json(envelope(401, [])) };
  out.default = { description: 'Any other error, in the envelope.', content: json(ERROR) };
  return out;
}
