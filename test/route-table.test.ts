import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ACTIONS } from '../src/core/access/actions.ts';
import { isAction, type RouteDef } from '../src/http/route-table.ts';
import { WORKSPACE_PREFIX } from '../src/http/route-table.ts';
import { ROUTE_TABLE } from '../src/http/routes/index.ts';
import { TABLE, type Gate } from './authz/table.ts';
import { appRoutes } from './fuzz/routes.ts';

/**
 * The registry test of the REST route table (src/http/routes/index.ts): every route declares the
 * core action it needs (or `public`/`cookie`), its input schemas and its output schema (null until
 * issue 15), is what the app's router serves, and is tested.
 *
 * "Tested" means: the authorization matrix has a row for it (test/authz/table.ts, keyed
 * `METHOD /router/path` exactly as ROUTE_TABLE's keys; the matrix sends every probe of the row as
 * every role and credential), or else some test file (a .test.ts under test/) names its path: the path
 * inside its group (`/tickets/:ref/comments`), each `:param` standing for one non-empty segment,
 * followed by a quote, backtick, `?` or whitespace.
 */

const here = dirname(fileURLToPath(import.meta.url));
const testSources = readdirSync(here, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.test.ts') && f !== 'route-table.test.ts')
  .map((f) => readFileSync(join(here, f), 'utf8'));

const pathParams = (path: string) => [...path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]!);
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function namedByATest(route: RouteDef): boolean {
  const pattern = route.path
    .split(/(:[A-Za-z]+)/)
    .map((part) => (part.startsWith(':') ? `[^/'"\`\\s?]+` : escape(part)))
    .join('');
  const re = new RegExp(`${pattern}(?=['"\`?\\s])`);
  return testSources.some((src) => re.test(src));
}

/** The gate of test/authz/table.ts that a route's action implies. */
function gateOf(route: RouteDef): Gate {
  if (!isAction(route.action)) return route.action;
  const r: { session?: true; reauth?: true; scope?: string } = ACTIONS[route.action];
  if (r.session || r.reauth) return 'session';
  // administration (issue 22): a session, or a token with the admin scope
  if (r.scope === 'admin') return 'admin';
  return r.scope === 'write' ? 'write' : 'read';
}

const rows = ROUTE_TABLE.map((r) => [r.key, r] as const);

it('is the route list the app serves: every REST route of the router comes from the table, once', () => {
  const keys = ROUTE_TABLE.map((r) => r.key);
  expect(new Set(keys).size, 'a route declared twice').toBe(keys.length);
  const served = appRoutes()
    .filter((r) => r.path !== '/mcp') // the MCP adapter's endpoint, mounted beside REST (src/app.ts)
    .map((r) => r.key);
  expect(served.sort()).toEqual([...keys].sort());
});

describe.each(rows)('%s', (_key, { path, route }) => {
  it('needs a core action from the action table, or says public/cookie', () => {
    if (isAction(route.action)) expect(Object.keys(ACTIONS)).toContain(route.action);
    else expect(['public', 'cookie']).toContain(route.action);
    if (path.startsWith(`${WORKSPACE_PREFIX}/`)) expect(isAction(route.action), 'a workspace route calls a core operation').toBe(true);
  });

  it('declares its input: zod schemas, params exactly those of its path', () => {
    expect(route.input, 'input: {} for a route that reads none').toBeTypeOf('object');
    for (const part of ['params', 'query', 'body'] as const) {
      const schema = route.input[part];
      if (schema !== undefined) expect(schema, part).toBeInstanceOf(z.ZodType);
    }
    const own = pathParams(route.path);
    const declared = route.input.params instanceof z.ZodObject ? Object.keys(route.input.params.shape) : [];
    expect(declared.sort(), 'input.params').toEqual(own.sort());
    if (route.method === 'GET') expect(route.input.body, 'a GET reads no body').toBeUndefined();
  });

  it('declares its output: a zod schema, a body per success status, or null (not yet described: a generic JSON response)', () => {
    expect('output' in route).toBe(true);
    if (route.output === null || route.output instanceof z.ZodType) return;
    for (const [status, body] of Object.entries(route.output)) {
      expect(Number(status)).toBeGreaterThanOrEqual(200);
      // a success status, or /readyz's 503 whose body is not the error envelope
      if (route.path !== '/readyz') expect(Number(status)).toBeLessThan(400);
      if (body !== null && !(body instanceof z.ZodType)) expect(body.file.length).toBeGreaterThan(0);
    }
  });

  it('is tested: a row of the authorization matrix whose gate is the action, or a test naming its path', () => {
    const probes = TABLE[`${route.method} ${path}`];
    if (!probes?.length) {
      expect(namedByATest(route), `no row in test/authz/table.ts and no test names ${route.path}`).toBe(true);
      return;
    }
    for (const p of probes) expect(p.auth, p.label).toBe(gateOf(route));
  });
});
