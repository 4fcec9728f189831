import { lintFromString, loadConfig } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACTIONS, type Action } from '../src/core/access/actions.ts';
import { buildOpenApi, openApiPath } from '../src/http/openapi/document.ts';
import { TOOL_OF_ACTION } from '../src/http/openapi/operation-ids.ts';
import { API_VERSION } from '../src/http/openapi/version.ts';
import { REST_API, ROUTE_TABLE } from '../src/http/routes/index.ts';
import { allTools } from '../src/mcp/registry.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeToken, makeUser, makeWorkspace } from './helpers/factories.ts';
import { checkedRoutes } from './helpers/openapi-check.ts';

type Op = { operationId: string; security: unknown[]; responses: Record<string, unknown>; 'x-session-only'?: boolean; tags: string[] };
type Doc = { openapi: string; info: { version: string }; paths: Record<string, Record<string, Op>> };

const doc = buildOpenApi(REST_API) as Doc;
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

describe('GET /api/openapi.json', () => {
  it('is served without authentication, is the document the code builds, and carries API-Version', async () => {
    const res = await app.call('GET', '/api/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(doc);
    expect(res.body.openapi).toBe('3.1.1');
    expect(res.headers.get('api-version')).toBe(API_VERSION);
    expect(doc.info.version).toBe(API_VERSION);
  });

  it('every response carries API-Version, errors included', async () => {
    const res = await app.call('GET', '/api/w/nope/tickets');
    expect(res.status).toBe(401);
    expect(res.headers.get('api-version')).toBe(API_VERSION);
  });

  it('validates as OpenAPI 3.1 under the committed redocly.yaml: no errors', async () => {
    const config = await loadConfig({ configPath: new URL('../redocly.yaml', import.meta.url).pathname });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
    expect(problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} ${JSON.stringify(p.location[0]?.pointer)}`)).toEqual([]);
  });

  it('describes every route of the route table (a route missing from the document fails here)', () => {
    const missing = ROUTE_TABLE.filter((r) => !doc.paths[openApiPath(r.path)]?.[r.method.toLowerCase()]).map((r) => r.key);
    expect(missing).toEqual([]);
    const described = Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0);
    expect(described).toBe(ROUTE_TABLE.length);
  });

  it('marks session-only operations and gives them the session cookie only; public ones no security', () => {
    const op = (method: string, path: string) => doc.paths[path]![method]!;
    expect(op('delete', '/api/w/{slug}/tickets/{ref}')['x-session-only']).toBe(true);
    expect(op('delete', '/api/w/{slug}/tickets/{ref}').security).toEqual([{ sessionCookie: [] }]);
    expect(op('post', '/api/w/{slug}/tickets').security).toEqual([{ bearerAuth: ['write'] }, { sessionCookie: [] }]);
    expect(op('get', '/healthz').security).toEqual([]);
    expect(op('get', '/api/openapi.json').security).toEqual([]);
  });

  it('lists the contract reasons of a route and the 403 reasons its action implies', () => {
    const reasons = (method: string, path: string, status: string) =>
      JSON.stringify(doc.paths[path]![method]!.responses[status]).match(/"enum":\[([^\]]*)\]/)?.[1] ?? '';
    expect(reasons('post', '/api/w/{slug}/tickets/{ref}/move', '409')).toContain('confirm_reset');
    expect(reasons('delete', '/api/w/{slug}/tickets/{ref}', '403')).toContain('reauth_required');
    expect(reasons('post', '/api/w/{slug}/time', '403')).toContain('workspace_users_only');
    expect(reasons('post', '/api/w/{slug}/time', '403')).toContain('log_time_forbidden');
  });

  it('lists 404 unknown_workspace on every workspace route and unknown_route wherever a path has a parameter (issue 19)', async () => {
    for (const r of ROUTE_TABLE) {
      const text = JSON.stringify(doc.paths[openApiPath(r.path)]![r.method.toLowerCase()]!.responses['404'] ?? null);
      if (r.path.startsWith('/api/w/:slug')) expect(text, `${r.method} ${r.path}`).toContain('unknown_workspace');
      if (r.path.includes('/:')) expect(text, `${r.method} ${r.path}`).toContain('unknown_route');
    }
    // a closed list keeps its own reasons beside them
    const run = JSON.stringify(doc.paths['/api/w/{slug}/billing/runs/{id}']!.get!.responses['404']);
    for (const reason of ['unknown_run', 'unknown_workspace', 'unknown_route']) expect(run).toContain(reason);
    // and the answers are what the document says (the response hook of app.call checks them)
    const ws = await makeWorkspace(app.db.sql);
    const { token } = await makeToken(app.db.sql, ws, await makeUser(app.db.sql, ws, { role: 'owner' }));
    const unknown = await app.call('GET', '/api/w/no-such-workspace/workflow', { token });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.details.reason).toBe('unknown_workspace');
  });

  it('names operations like their MCP tool: the table matches the MCP registry, and ids are unique', () => {
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((o) => o.operationId));
    expect(new Set(ids).size).toBe(ids.length);
    const withRoute = new Set(ROUTE_TABLE.map((r) => r.route.action));
    for (const tool of allTools) {
      if (!withRoute.has(tool.action)) continue; // assistants' tools without a REST twin (get_context_pack, get_bank_balances)
      expect(ids, `tool ${tool.name}`).toContain(tool.name);
    }
    for (const [action, name] of Object.entries(TOOL_OF_ACTION)) {
      expect(Object.hasOwn(ACTIONS, action)).toBe(true);
      expect(allTools.some((t) => t.name === name && t.action === (action as Action))).toBe(true);
    }
  });

  it('reports which operations have an output schema (the ones the response-validation hook checks)', () => {
    const checked = checkedRoutes().map((r) => r.key);
    const unchecked = ROUTE_TABLE.filter((r) => r.route.output === null).map((r) => r.key);
    // the contract's main resources are described
    for (const key of [
      'GET /api/w/:slug/tickets',
      'GET /api/w/:slug/tickets/:ref',
      'POST /api/w/:slug/tickets',
      'GET /api/w/:slug/board',
      'GET /api/w/:slug/my',
      'GET /api/w/:slug/time',
      'GET /api/w/:slug/documents',
      'GET /api/w/:slug/billing/runs/:id',
    ]) {
      expect(checked).toContain(key);
    }
    expect(checked.length + unchecked.length).toBe(ROUTE_TABLE.length);
    console.info(`OpenAPI: ${checked.length} of ${ROUTE_TABLE.length} operations have an output schema; without: ${unchecked.join(', ')}`);
  });
});
