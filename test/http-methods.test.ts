import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeToken, makeUser, makeWorkspace, type Workspace } from './helpers/factories.ts';
import { rawRequest, type RawResult } from './helpers/raw.ts';

/**
 * Issue 9, defect 9: a method a path does not take is 405 `method_not_allowed` in the envelope
 * with an `Allow` header (methods no router implements, such as TRACE or PROPFIND, too); a path
 * no route has is 404 in the envelope whatever the method; HEAD and OPTIONS behave.
 */

let app: TestApp;
let ws: Workspace;
let token: string;

beforeAll(async () => {
  app = await startTestApp();
  ws = await makeWorkspace(app.db.sql);
  const owner = await makeUser(app.db.sql, ws, { role: 'owner' });
  token = (await makeToken(app.db.sql, ws, owner)).token;
});
afterAll(() => app.close());

const send = (method: string, path: string) => rawRequest(app.base, method, path, { headers: { authorization: `Bearer ${token}` } });

function expectMethodNotAllowed(res: RawResult, method: string, allowed: string[]) {
  expect(res.status, `${method}: ${JSON.stringify(res.body)}`).toBe(405);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body).toEqual({ error: { code: 'method_not_allowed', message: expect.any(String), details: { method, allowed: expect.any(Array) } } });
  expect([...res.body.error.details.allowed].sort()).toEqual([...allowed].sort());
  expect(String(res.headers.allow).split(', ').sort()).toEqual([...allowed].sort());
}

describe('methods a path does not take', () => {
  it('PUT /tickets is 405 in the envelope with Allow', async () => {
    expectMethodNotAllowed(await send('PUT', `/api/w/${ws.slug}/tickets`), 'PUT', ['HEAD', 'GET', 'POST']);
  });

  it('methods no router implements (TRACE, PROPFIND, MKCOL, COPY, LOCK, SEARCH, PURGE) are 405 too, not 501', async () => {
    for (const method of ['TRACE', 'PROPFIND', 'MKCOL', 'COPY', 'LOCK', 'SEARCH', 'PURGE']) {
      expectMethodNotAllowed(await send(method, `/api/w/${ws.slug}/tickets`), method, ['HEAD', 'GET', 'POST']);
    }
  });

  it('every area answers the same way: ticket, time, periods, session, health and MCP paths', async () => {
    const cases: [string, string, string[]][] = [
      ['POST', `/api/w/${ws.slug}/tickets/WEB-1/comments/00000000-0000-0000-0000-000000000000`, ['PATCH', 'DELETE']],
      ['PUT', `/api/w/${ws.slug}/tickets/WEB-1`, ['HEAD', 'GET', 'PATCH', 'DELETE']],
      ['GET', `/api/w/${ws.slug}/tickets/WEB-1/parent`, ['PUT']],
      ['DELETE', `/api/w/${ws.slug}/time`, ['HEAD', 'GET', 'POST']],
      ['PUT', `/api/w/${ws.slug}/periods`, ['HEAD', 'GET', 'POST']],
      ['GET', '/api/auth/login', ['POST']],
      ['DELETE', '/api/auth/session', ['HEAD', 'GET']],
      ['POST', '/healthz', ['HEAD', 'GET']],
      ['PUT', '/mcp', ['HEAD', 'GET', 'POST', 'DELETE']],
    ];
    for (const [method, path, allowed] of cases) expectMethodNotAllowed(await send(method, path), method, allowed);
  });

  it('a refused method runs nothing behind the route: no authentication is needed to learn it is refused, and nothing is written', async () => {
    const [before] = await app.db.sql<{ n: number }[]>`select count(*)::int as n from tickets`;
    const res = await rawRequest(app.base, 'PUT', `/api/w/${ws.slug}/tickets`, { headers: { 'content-type': 'application/json' }, body: '{"title":"x"}' });
    expect(res.status).toBe(405);
    const [after] = await app.db.sql<{ n: number }[]>`select count(*)::int as n from tickets`;
    expect(after!.n).toBe(before!.n);
  });
});

describe('unknown routes', () => {
  it('are 404 in the envelope for every method, known or not, and carry no Allow', async () => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'TRACE', 'PROPFIND', 'OPTIONS']) {
      for (const path of ['/nope', `/api/w/${ws.slug}/nothing-here`, '/api/auth/nothing']) {
        const res = await send(method, path);
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.body).toEqual({ error: { code: 'not_found', message: expect.any(String), details: { reason: 'unknown_route' } } });
        expect(res.headers.allow).toBeUndefined();
      }
    }
  });
});

describe('HEAD and OPTIONS', () => {
  it('HEAD on a GET route answers its status and headers without a body; on an unknown route, 404', async () => {
    const ok = await send('HEAD', `/api/w/${ws.slug}/tickets`);
    expect(ok.status).toBe(200);
    expect(ok.body).toBe('');
    expect(ok.headers['content-type']).toMatch(/^application\/json/);
    const missing = await send('HEAD', '/nope');
    expect(missing.status).toBe(404);
    expect(missing.body).toBe('');
  });

  it('HEAD on a POST-only route is 405', async () => {
    const res = await send('HEAD', '/api/auth/login');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
  });

  it('OPTIONS on a route answers 200 with Allow and no body, without authentication', async () => {
    const res = await rawRequest(app.base, 'OPTIONS', `/api/w/${ws.slug}/tickets`);
    expect(res.status).toBe(200);
    expect(String(res.headers.allow).split(', ').sort()).toEqual(['GET', 'HEAD', 'POST']);
    expect(res.body).toBe('');
  });
});
