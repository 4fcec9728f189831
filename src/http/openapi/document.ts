import { z } from 'zod';
import { ACTIONS, type Requirement } from '../../core/access/actions.ts';
import { isAction, WORKSPACE_PREFIX, type ResponseBody, type RestApi, type RouteDef, type RouteOutput, type TableRoute } from '../route-table.ts';
import { API_VERSION } from './version.ts';
import { SchemaComponents, type Json } from './json-schema.ts';
import { OPERATION_ID_OF_ROUTE, operationIdOfAction, TOOL_OF_ACTION } from './operation-ids.ts';
import { credentialReasons, INPUT_REASONS, pathReasons, placesTicket, ROUTE_REASONS, writeReadsCookie, type Reasons } from './reasons.ts';
import { errorResponses } from './errors.ts';

export interface DocumentOptions {
  /** Responses closed (`additionalProperties: false`): the test suite's variant, which fails on an undocumented field. */
  closed?: boolean;
}

/** `/api/w/:slug/tickets/:ref` -> `/api/w/{slug}/tickets/{ref}`. */
export const openApiPath = (path: string): string => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

const SLUG = { name: 'slug', in: 'path', required: true, description: "The workspace's slug.", schema: { type: 'string' } };

/**
 * The OpenAPI 3.1 document of the REST API, built from the route table: each route's action
 * (security, session-only, 403 reasons), its input schemas (parameters and body, with their
 * limits), its output schemas (success responses) and the contract's reasons (error responses).
 */
export function buildOpenApi(api: RestApi, opts: DocumentOptions = {}): Json {
  const components = new SchemaComponents();
  const paths: Record<string, Json> = {};
  const taken = new Set<string>();
  for (const r of api.routes) {
    const item = (paths[openApiPath(r.path)] ??= {});
    const op = operation(r, components, opts.closed ?? false);
    // a second route of one action (PUT and DELETE /mailbox) keeps the name, told apart by its method
    if (taken.has(op.operationId as string)) op.operationId = `${op.operationId as string}_${r.method.toLowerCase()}`;
    taken.add(op.operationId as string);
    item[r.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.1',
    info: {
      title: 'Work tracker REST API',
      version: API_VERSION,
      description:
        'Tickets, boards, time entries and documents. Every response carries `API-Version`. Within a version changes are additive: ' +
        'new operations, new optional inputs, new response fields (ignore the ones you do not know).',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: '/', description: 'This installation.' }],
    tags: api.tags,
    paths,
    components: {
      schemas: { ...components.schemas, ...errorComponents() },
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API token: `Authorization: Bearer <token>`. Scopes: read, write, triage.' },
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: 'wt_session',
          description: 'A browser session (POST /api/auth/login). A write also sends the session’s CSRF token in `X-CSRF-Token`.',
        },
      },
    },
  };
}

function errorComponents(): Record<string, Json> {
  return {
    Error: {
      type: 'object',
      description: 'The error envelope of every failed request.',
      required: ['error'],
      properties: {
        error: {
          type: 'object',
          required: ['code', 'message'],
          properties: {
            code: { type: 'string', description: 'Stable error code (the HTTP status’s meaning).' },
            message: { type: 'string', description: 'For people; may change.' },
            details: {
              type: 'object',
              description: '`reason`, the stable snake_case cause, and extra keys such as `field`.',
              properties: { reason: { type: 'string' } },
            },
          },
        },
      },
    },
  };
}

function operation(r: TableRoute, components: SchemaComponents, closed: boolean): Json {
  const { route } = r;
  const requirement: Requirement | null = isAction(route.action) ? ACTIONS[route.action] : null;
  const sessionOnly = route.action === 'cookie' || !!requirement?.session || !!requirement?.reauth;
  const op: Json = {
    operationId: operationIdOf(r),
    tags: [r.tag],
    summary: summaryOf(r, requirement, sessionOnly),
    ...(route.description ? { description: route.description } : {}),
    security: securityOf(route, requirement, sessionOnly),
    ...(sessionOnly ? { 'x-session-only': true } : {}),
    ...(isAction(route.action) ? { 'x-action': route.action } : {}),
  };
  const parameters = parametersOf(r, components);
  if (parameters.length) op.parameters = parameters;
  if (route.input.body) {
    op.requestBody = { required: route.method !== 'DELETE', content: { 'application/json': { schema: components.convert(route.input.body, 'input') } } };
  }
  const pathMisses = pathReasons(r.path, r.path.startsWith(WORKSPACE_PREFIX));
  op.responses = { ...successResponses(route.output, components, closed), ...errorResponses(reasonsOf(r), !!requirement, pathMisses) };
  return op;
}

export function operationIdOf(r: TableRoute): string {
  const action = r.route.action;
  const fromPath = () =>
    `${r.method}_${r.path}`
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/_$/, '');
  return OPERATION_ID_OF_ROUTE[r.key] ?? (isAction(action) ? (TOOL_OF_ACTION[action] ?? operationIdOfAction(action)) : fromPath());
}

function summaryOf(r: TableRoute, requirement: Requirement | null, sessionOnly: boolean): string {
  const who: string[] = [];
  if (sessionOnly) who.push('Session only');
  else if (requirement?.scope) who.push(`Token scope ${requirement.scope}`);
  if (requirement?.reauth) who.push('Owner or Admin re-authenticated within ten minutes');
  else if (requirement?.admin) who.push('Owner or Admin');
  if (requirement?.staff) who.push('workspace users only');
  if (!requirement && !sessionOnly) who.push('No authentication');
  return `${r.method} ${r.path.replace(WORKSPACE_PREFIX, '')} (${who.join('; ')})`;
}

function securityOf(route: RouteDef, requirement: Requirement | null, sessionOnly: boolean): Json[] {
  if (route.action === 'public') return [];
  if (sessionOnly) return [{ sessionCookie: [] }];
  // OpenAPI 3.1 lets a non-OAuth requirement list roles: here, the token scope
  return [{ bearerAuth: requirement?.scope ? [requirement.scope] : [] }, { sessionCookie: [] }];
}

function parametersOf(r: TableRoute, components: SchemaComponents): Json[] {
  const out: Json[] = [];
  const declared = objectProps(r.route.input.params, components);
  for (const name of [...r.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!)) {
    if (name === 'slug' && r.path.startsWith(WORKSPACE_PREFIX)) {
      out.push(SLUG);
      continue;
    }
    const schema = declared.props[name] ?? { type: 'string' };
    const { description, ...rest } = schema;
    out.push({ name, in: 'path', required: true, ...(description ? { description } : {}), schema: rest });
  }
  const query = objectProps(r.route.input.query, components);
  for (const [name, schema] of Object.entries(query.props)) {
    const { description, ...rest } = schema;
    out.push({ name, in: 'query', required: query.required.has(name), ...(description ? { description } : {}), schema: rest });
  }
  return out;
}

/** The properties of an object schema (path or query), each its own parameter. */
function objectProps(schema: z.ZodType | undefined, components: SchemaComponents): { props: Record<string, Json>; required: Set<string> } {
  if (!schema) return { props: {}, required: new Set() };
  const json = components.convert(schema, 'input');
  return { props: (json.properties ?? {}) as Record<string, Json>, required: new Set((json.required ?? []) as string[]) };
}

const GENERIC_JSON = { description: 'JSON; its schema is not yet described.', content: { 'application/json': { schema: {} } } };

function successResponses(output: RouteOutput | null, components: SchemaComponents, closed: boolean): Json {
  if (output === null) return { 200: GENERIC_JSON };
  const byStatus: Record<number, ResponseBody> = output instanceof z.ZodType ? { 200: output } : output;
  return Object.fromEntries(Object.entries(byStatus).map(([status, body]) => [status, responseOf(Number(status), body, components, closed)]));
}

function responseOf(status: number, body: ResponseBody, components: SchemaComponents, closed: boolean): Json {
  if (body === null) return { description: status === 304 ? 'Not modified (If-None-Match matched the ETag).' : 'No body.' };
  if (body instanceof z.ZodType) {
    const description = status === 201 ? 'Created.' : status === 202 ? 'Accepted.' : status === 503 ? 'Not ready, and why.' : 'OK.';
    return { description, content: { 'application/json': { schema: components.convert(body, 'output', closed) } } };
  }
  return { description: 'The file.', content: Object.fromEntries(body.file.map((type) => [type, { schema: { type: 'string', contentMediaType: type } }])) };
}

/** The route's error reasons: its input's, its action's and the contract's. */
function reasonsOf(r: TableRoute): Reasons {
  const { route } = r;
  const documented = ROUTE_REASONS[`${r.method} ${openApiPath(r.path.replace(WORKSPACE_PREFIX, ''))}`] ?? {};
  const hasInput = !!(route.input.body || route.input.query || route.input.params);
  const forbidden = isAction(route.action) ? credentialReasons(route.action) : [];
  if (isAction(route.action) && placesTicket(route.action)) forbidden.push('project_membership', 'inbox_forbidden', 'project_not_allowed');
  if (writeReadsCookie(r.method, route.action)) forbidden.push('csrf');
  const merged: Reasons = { ...documented };
  if (hasInput) merged[400] = [...INPUT_REASONS, ...(documented[400] ?? [])];
  if (forbidden.length || documented[403]) merged[403] = [...new Set([...forbidden, ...(documented[403] ?? [])])];
  return merged;
}
