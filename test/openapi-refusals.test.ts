import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOARD_LIMIT_MAX } from '../src/core/board/board.ts';
import { MAX_FILTER_IDS } from '../src/core/tickets/filters.ts';
import { LIST_LIMIT_MAX } from '../src/core/tickets/list.ts';
import { MAX_REF_LENGTH } from '../src/core/tickets/ref.ts';
import { buildOpenApi, openApiPath } from '../src/http/openapi/document.ts';
import { WORKSPACE_PREFIX, type TableRoute } from '../src/http/route-table.ts';
import { REST_API, ROUTE_TABLE } from '../src/http/routes/index.ts';
import { login, startTestApp, type CallResult, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makeUser, makeWorkspace, type Workspace } from './helpers/factories.ts';

/**
 * The document against the server (issue 26): each route is sent the refusals the contract lists
 * (an unknown or over-long ticket ref, a malformed or unknown id, a query value past its published
 * bound) and every answer's status must be declared by the route itself, not left to `default`,
 * with its `details.reason` inside the declared list. A published bound is checked from both sides:
 * one past it is refused, the bound itself is not refused by validation.
 */

type Schema = Record<string, any>;
type Op = { parameters?: { name: string; in: string; schema: Schema }[]; responses: Record<string, Schema> };
const doc = buildOpenApi(REST_API) as { paths: Record<string, Record<string, Op>> };
const opOf = (r: TableRoute): Op => doc.paths[openApiPath(r.path)]![r.method.toLowerCase()]!;
const CODE_OF: Record<number, string> = { 400: 'invalid', 403: 'forbidden', 404: 'not_found', 409: 'conflict', 412: 'precondition_failed' };

/** The closed list of reasons a declared error response allows, or null when it names them only as examples. */
function declaredReasons(response: Schema): string[] | null {
  const reason = response.content?.['application/json']?.schema?.allOf?.[1]?.properties?.error?.properties?.details?.properties?.reason;
  return reason?.enum ?? null;
}

/** Fails unless the answer's status is one the route declares, and its reason one the status allows. */
function expectDeclared(r: TableRoute, sent: string, res: CallResult): void {
  const where = `${r.key} ${sent} -> ${res.status} ${JSON.stringify(res.body?.error?.details ?? null)}`;
  expect(res.status, where).toBeLessThan(500);
  // 413, 415, 422 and 429 are the `default` response's by design (src/http/openapi/errors.ts)
  if (res.status < 400 || !CODE_OF[res.status]) return;
  const response = opOf(r).responses[String(res.status)];
  expect(response, `${where}: status not declared (left to default)`).toBeDefined();
  expect(res.body.error.code, where).toBe(CODE_OF[res.status]);
  const reason = res.body.error.details?.reason as string | undefined;
  const allowed = declaredReasons(response!);
  if (reason && allowed) expect(allowed, `${where}: reason not declared`).toContain(reason);
}

let app: TestApp;
let ws: Workspace;
let session: SessionCookie;

beforeAll(async () => {
  app = await startTestApp();
  ws = await makeWorkspace(app.db.sql);
  const owner = await makeUser(app.db.sql, ws, { role: 'owner' });
  session = await login(app, owner.email, owner.password);
  // re-authenticated, so a refusal comes from the input or the missing row, not from the credential
  expect((await app.call('POST', '/api/auth/reauth', { session, body: { password: owner.password } })).status).toBe(200);
});
afterAll(() => app.close());

const workspaceRoutes = ROUTE_TABLE.filter((r) => r.path.startsWith(WORKSPACE_PREFIX));
const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';

/** The route's path with its slug filled and each other parameter given `valueOf(name)`. */
const pathOf = (r: TableRoute, valueOf: (name: string) => string) =>
  r.path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => (name === 'slug' ? ws.slug : encodeURIComponent(valueOf(name))));

const send = (r: TableRoute, path: string) => app.call(r.method, path, { session, ...(r.method === 'GET' ? {} : { body: {} }) });

describe('the OpenAPI document declares what the server answers (issue 26)', () => {
  it('publishes the limits the core enforces: {ref} length, page sizes, id lists', () => {
    for (const r of workspaceRoutes.filter((x) => x.path.includes(':ref'))) {
      const ref = opOf(r).parameters!.find((p) => p.name === 'ref')!;
      expect(ref.schema.maxLength, r.key).toBe(MAX_REF_LENGTH);
      expect(declaredReasons(opOf(r).responses['400']!), r.key).toContain('ref_too_long');
    }
    const param = (key: string, name: string) => opOf(ROUTE_TABLE.find((x) => x.key === key)!).parameters!.find((p) => p.name === name)!.schema;
    for (const [key, max] of [
      ['GET /api/w/:slug/tickets', LIST_LIMIT_MAX],
      ['GET /api/w/:slug/board', BOARD_LIMIT_MAX],
    ] as const) {
      const integer = param(key, 'limit').anyOf.find((s: Schema) => s.type === 'integer');
      expect(integer, key).toMatchObject({ minimum: 1, maximum: max });
      for (const list of ['stateIds', 'kindIds', 'labelIds', 'priorityIds']) {
        expect(
          param(key, list).anyOf.find((s: Schema) => s.type === 'array'),
          `${key} ${list}`,
        ).toMatchObject({ maxItems: MAX_FILTER_IDS });
      }
    }
  });

  it('documents the details a client acts on: the run that billed a period, on nothing_to_bill', () => {
    const conflict = opOf(ROUTE_TABLE.find((x) => x.key === 'POST /api/w/:slug/billing/runs')!).responses['409']!;
    const details = conflict.content['application/json'].schema.allOf[1].properties.error.properties.details.properties;
    expect(details.reason.enum).toContain('nothing_to_bill');
    expect(details.runId).toMatchObject({ type: 'string', format: 'uuid' });
  });

  it('every route with path parameters: an unknown, malformed or over-long one is answered with a declared status and reason', async () => {
    const routes = workspaceRoutes.filter((r) => r.path.replace(WORKSPACE_PREFIX, '').includes('/:'));
    expect(routes.length).toBeGreaterThan(30);
    for (const r of routes) {
      const refusals: [string, (name: string) => string][] = [
        ['unknown', (name) => (name === 'ref' ? 'NOPE-999999' : UNKNOWN_UUID)],
        ['malformed', (name) => (name === 'ref' ? 'not a ref' : 'not-a-uuid')],
        ['over-long ref', (name) => (name === 'ref' ? 'X'.repeat(MAX_REF_LENGTH + 1) : UNKNOWN_UUID)],
      ];
      for (const [sent, valueOf] of refusals) {
        const res = await send(r, pathOf(r, valueOf));
        expectDeclared(r, sent, res);
        if (sent === 'over-long ref' && r.path.includes(':ref') && r.method === 'GET') expect(res.body.error.details.reason, r.key).toBe('ref_too_long');
      }
    }
  });

  it('every bounded query parameter: one past the bound is refused, the bound itself is not refused by validation', async () => {
    const probes: { r: TableRoute; name: string; over: string; at: string }[] = [];
    for (const r of workspaceRoutes.filter((x) => x.method === 'GET' && !x.path.replace(WORKSPACE_PREFIX, '').includes('/:'))) {
      for (const p of opOf(r).parameters?.filter((x) => x.in === 'query') ?? []) {
        const arms: Schema[] = p.schema.anyOf ?? [p.schema];
        const integer = arms.find((s) => (s.type === 'integer' || s.type === 'number') && s.maximum !== undefined);
        if (integer) probes.push({ r, name: p.name, over: String(integer.maximum + 1), at: String(integer.maximum) });
        const list = arms.find((s) => s.type === 'array' && s.maxItems !== undefined);
        if (list) {
          const ids = (n: number) => Array.from({ length: n }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`).join(',');
          probes.push({ r, name: p.name, over: ids(list.maxItems + 1), at: ids(list.maxItems) });
        }
      }
    }
    expect(probes.map((p) => `${p.r.key} ${p.name}`)).toEqual(expect.arrayContaining(['GET /api/w/:slug/tickets limit', 'GET /api/w/:slug/board stateIds']));
    for (const { r, name, over, at } of probes) {
      const path = pathOf(r, () => '');
      const refused = await send(r, `${path}?${name}=${over}`);
      expectDeclared(r, `${name}=${over}`, refused);
      expect(refused.status, `${r.key} ${name} past its bound`).toBe(400);
      const atBound = await send(r, `${path}?${name}=${at}`);
      expectDeclared(r, `${name}=${at}`, atBound);
      const validation = atBound.status === 400 && atBound.body.error.details?.reason === 'validation';
      expect(validation ? atBound.body.error.details : null, `${r.key} ${name} at its bound`).toBeNull();
    }
  });
});
