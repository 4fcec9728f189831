import type { Middleware } from 'koa';
import { Router } from '@koa/router';
import { z } from 'zod';
import { ACTIONS, type Action } from '../core/access/actions.ts';
import { runOpSent, type AnyOperation, type AnyPublicOperation, type OperationResult } from '../core/operation.ts';
import { MAX_REF_LENGTH } from '../core/tickets/ref.ts';
import { coreCtx, type AppContext, type AppDeps, type AppState } from './context.ts';
import { authenticate } from './middleware/auth.ts';
import { sendResult } from './json-text.ts';

/**
 * What a route needs of its caller: the core action its operation authorizes (src/core/access/actions.ts),
 * or, for the routes that call no workspace operation, `public` (health, login, logout: anyone) or
 * `cookie` (reauth, session: the caller's own browser session, which the route reads itself).
 */
export type RouteAccess = Action | 'public' | 'cookie';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * The route's input, one zod schema per part it reads; a part left out is not read. `params` is
 * parsed here before the handler runs (the workspace `:slug` belongs to authentication, not to it).
 * `query` and `body` are the core operation's own schemas of those parts; the handler passes the
 * raw values on, merged with the path's and headers' into the operation's one input (`opInput`),
 * which the operation parses itself, so the contract's errors stay the core's.
 */
export interface RouteInput<P extends z.ZodType> {
  params?: P;
  query?: z.ZodType;
  body?: z.ZodType;
}

export interface RouteRequest<P> {
  ctx: AppContext;
  deps: AppDeps;
  params: P;
}

/** A success response's body: a zod schema (JSON), `null` (no body), or a file in one of these content types. */
export type ResponseBody = z.ZodType | null | { file: string[] };
export type RouteOutput = z.ZodType | Readonly<Record<number, ResponseBody>>;

/** One REST route: the data the router, the route-table test and (issue 15) the OpenAPI document read. */
export interface RouteDef<P extends z.ZodType = z.ZodType, Op extends AnyOperation = AnyOperation> {
  method: HttpMethod;
  /** The path inside its group (a group may add a prefix: `/api/auth`, `/api/w/:slug`). */
  path: string;
  /**
   * The core operation the route runs (src/core/operation.ts): the router authenticates the caller
   * and hands `runOpSent` the request's input; the operation authorizes, parses, runs and audits.
   */
  op?: Op;
  /** The operation's action, or the access of a route that runs none (set by defineRoute from `op`). */
  action: RouteAccess;
  input: RouteInput<P>;
  /**
   * The success response, for the OpenAPI document (src/http/openapi): a zod schema (200 JSON), or
   * the body per status; null: not yet described (a generic JSON response).
   */
  output: RouteOutput | null;
  /** Route middleware run after authentication and before the handler (uploads: multipart parsing). */
  before?: (deps: AppDeps) => Middleware[];
  /** The success status of an operation's route (default 200). */
  status?: number;
  /** The OpenAPI operation's description: the contract's prose for what the summary (method, path, who) does not say. */
  description?: string;
  /**
   * The operation's input from the request; default: the query (GET, DELETE) or the body, with
   * the path's params beside them (`opInput`).
   */
  sent?: (req: RouteRequest<z.output<P>>) => unknown;
  /** Shapes the response from the operation's result (headers, a file); default: the result is the JSON body. */
  respond?: (ctx: AppContext, result: OperationResult<Op>) => void;
  /** A route that runs no operation (health, the API document, the session's own routes): the whole answer. */
  handler?: (req: RouteRequest<z.output<P>>) => unknown;
  /**
   * The public operation (src/core/operation.ts `definePublicOp`) a `handler` route runs through
   * `runPublicOp`: login, re-authentication, an invitation's or a reset's link, which run before
   * there is a principal and whose handler also sets the cookie. Named here so the door walk
   * (test/doors.test.ts) sees which operation the handler runs.
   */
  publicOp?: AnyPublicOperation;
}

type RouteSpec<P extends z.ZodType, Op extends AnyOperation> =
  | (Omit<RouteDef<P, Op>, 'action' | 'handler' | 'output'> & { op: Op; action?: undefined; output?: RouteOutput | null })
  | (Omit<RouteDef<P, Op>, 'op' | 'sent' | 'respond' | 'status'> & { handler: NonNullable<RouteDef<P, Op>['handler']> });

/**
 * Declares a route; the identity function that gives the handler its parsed params' type. A
 * route with an operation takes its action (and, unless it says otherwise, its output) from it.
 */
export function defineRoute<P extends z.ZodType = z.ZodType<Record<string, never>>, Op extends AnyOperation = AnyOperation>(spec: RouteSpec<P, Op>): RouteDef {
  if ('op' in spec && spec.op) {
    const output = spec.output === undefined ? (spec.status ? { [spec.status]: spec.op.output } : spec.op.output) : spec.output;
    return { ...spec, action: spec.op.action, output } as unknown as RouteDef;
  }
  return spec as unknown as RouteDef;
}

/** A tag of the OpenAPI document: one subject of the API. */
export interface ApiTag {
  name: string;
  description: string;
}

/** A routes file's routes, mounted on one router, with an optional prefix and the tag they are documented under. */
export interface RouteGroup {
  prefix?: string;
  routes: RouteDef[];
  tag: string;
}

/** Where the workspace areas are mounted. */
export const WORKSPACE_PREFIX = '/api/w/:slug';

/** One REST route with its full router path (`/api/w/:slug/tickets/:ref`) and its group's tag. */
export interface TableRoute {
  key: string;
  method: string;
  path: string;
  tag: string;
  route: RouteDef;
}

/** The REST API as the OpenAPI document describes it: every route, and the tags in the document's order. */
export interface RestApi {
  routes: TableRoute[];
  tags: ApiTag[];
}

/** The groups' routes, flattened: the root groups at their prefix, the workspace groups under WORKSPACE_PREFIX. */
export function routeTable(root: RouteGroup[], workspace: RouteGroup[]): TableRoute[] {
  return [
    ...root.flatMap((g) => g.routes.map((route) => ({ route, tag: g.tag, path: `${g.prefix ?? ''}${route.path}` }))),
    ...workspace.flatMap((g) => g.routes.map((route) => ({ route, tag: g.tag, path: `${WORKSPACE_PREFIX}${route.path}` }))),
  ].map(({ route, tag, path }) => ({ key: `${route.method} ${path}`, method: route.method, path, tag, route }));
}

/**
 * A path parameter holding a UUID, passed on raw: the core operation parses it (400 `bad_uuid`
 * naming `field`) after authorizing, so a caller lacking the scope or session gets 403 first.
 */
export const idParam = (field = 'id') => z.string().describe(`${field}: a UUID, parsed by the core.`);

/** A path `{ref}`: a ticket UUID or human id (`PREFIX-N`), read by the core's parseTicketRef. */
export const ticketRefParam = z
  .string()
  // published, not enforced here: the core refuses a longer one with its own reason (400 `ref_too_long`)
  .meta({ maxLength: MAX_REF_LENGTH })
  .describe(`A ticket UUID or human id (PREFIX-N), at most ${MAX_REF_LENGTH} characters.`);

export const isAction = (access: RouteAccess): access is Action => Object.hasOwn(ACTIONS, access);

/**
 * A core operation's one input: the fields of the request's body (or query) with those the route
 * reads from the path and headers beside them, which win over a body field of the same name. A
 * body that is not an object is passed on as it is, for the operation's schema to refuse.
 */
export function opInput(body: unknown, fields: Record<string, unknown>): unknown {
  if (body === undefined || body === null) return fields;
  if (typeof body !== 'object' || Array.isArray(body)) return body;
  return { ...body, ...fields };
}

const NO_PARAMS = Object.freeze({});

const READS_QUERY = new Set<HttpMethod>(['GET', 'DELETE']);

/** What an operation's route sends it by default: the query or the body, with the path's params beside them. */
function defaultSent({ ctx, params }: RouteRequest<unknown>, method: HttpMethod): unknown {
  const fields = (params ?? {}) as Record<string, unknown>;
  return READS_QUERY.has(method) ? { ...ctx.query, ...fields } : opInput(ctx.request.body, fields);
}

function dispatch(route: RouteDef, deps: AppDeps): Middleware {
  const { op } = route;
  return async (ctx) => {
    const c = ctx as AppContext;
    const params: unknown = route.input.params ? route.input.params.parse(c.params) : NO_PARAMS;
    const req = { ctx: c, deps, params };
    if (!op) {
      await route.handler!(req);
      return;
    }
    const result = await runOpSent(op, coreCtx(deps, c), route.sent ? route.sent(req) : defaultSent(req, route.method));
    if (route.status) c.status = route.status;
    if (route.respond) route.respond(c, result);
    else sendResult(c, result);
  };
}

/**
 * The @koa/router router of the REST API, each route at its full path: a route with a core action
 * is authenticated first (the caller identified; the operation decides what they may do), then its
 * own middleware, then the handler.
 */
export function restRouter(deps: AppDeps, routes: readonly TableRoute[]): Router<AppState> {
  const r = new Router<AppState>();
  const auth = authenticate(deps) as Middleware;
  for (const { path, route } of routes) {
    const chain = [...(isAction(route.action) ? [auth] : []), ...(route.before?.(deps) ?? []), dispatch(route, deps)];
    r.register(path, [route.method.toLowerCase()], chain as never, { pathAsRegExp: false });
  }
  return r;
}
