import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { buildOpenApi, openApiPath } from '../../src/http/openapi/document.ts';
import type { TableRoute } from '../../src/http/route-table.ts';
import { REST_API, ROUTE_TABLE } from '../../src/http/routes/index.ts';

/**
 * The response-validation hook of the HTTP tests (issue 15): every JSON response `call()` receives
 * is checked against the OpenAPI document's schema for its operation and status, closed (an
 * undocumented field fails), for the routes whose output schema is written (`output` not null).
 */

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const doc = buildOpenApi(REST_API, { closed: true }) as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
ajv.addSchema(doc, 'openapi.json');

const matchers = ROUTE_TABLE.map((r) => ({ r, re: new RegExp(`^${r.path.replace(/:[A-Za-z0-9_]+/g, '[^/]+')}$`) }));
const compiled = new Map<string, ValidateFunction>();

/** The operations the hook checks: those with an output schema. */
export const checkedRoutes = (): TableRoute[] => ROUTE_TABLE.filter((r) => r.route.output !== null);

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

/** Throws when a JSON response does not match the document (or its status is not documented). */
export function checkResponse(method: string, url: string, status: number, contentType: string, body: unknown): void {
  const path = new URL(url).pathname;
  const hit = matchers.find((m) => m.r.method === method && m.re.test(path));
  if (!hit || hit.r.route.output === null) return;
  const oaPath = openApiPath(hit.r.path);
  const responses = doc.paths[oaPath]![method.toLowerCase()]!.responses;
  const key = Object.hasOwn(responses, String(status)) ? String(status) : status >= 400 ? 'default' : null;
  if (!key) throw new Error(`OpenAPI: ${method} ${hit.r.path} answered ${status}, a status the document does not list (${Object.keys(responses).join(', ')})`);
  if (!contentType.includes('json') || body === '') return;
  const ref = `openapi.json#/${pointer('paths', oaPath, method.toLowerCase(), 'responses', key, 'content', 'application/json', 'schema')}`;
  let validate = compiled.get(ref);
  if (!validate) {
    validate = ajv.compile({ $ref: ref });
    compiled.set(ref, validate);
  }
  if (!validate(body)) {
    const errors = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
    throw new Error(`OpenAPI: ${method} ${path} ${status} does not match the document:\n  ${errors.join('\n  ')}\nbody: ${JSON.stringify(body).slice(0, 500)}`);
  }
}
