import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorEnvelope } from '../src/http/middleware/errors.ts';
import { makeLogger } from '../src/log.ts';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makeToken, makeUser, makeWorkspace, type Workspace } from './helpers/factories.ts';

let app: TestApp;
let ws: Workspace;
let session: SessionCookie;
let token: string;

beforeAll(async () => {
  app = await startTestApp();
  ws = await makeWorkspace(app.db.sql);
  const owner = await makeUser(app.db.sql, ws, { role: 'owner' });
  session = await login(app, owner.email, owner.password);
  token = (await makeToken(app.db.sql, ws, owner)).token;
});
afterAll(() => app.close());

function expectEnvelope(res: { status: number; body: any }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({ error: expect.objectContaining({ code, message: expect.any(String) }) });
}

describe('the error envelope', () => {
  it('every response carries X-Request-Id, and a sane incoming one is echoed', async () => {
    const a = await app.call('GET', '/healthz');
    expect(a.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const b = await app.call('GET', `/api/w/${ws.slug}/workflow`, { headers: { 'x-request-id': 'trace-12345678' } });
    expect(b.headers.get('x-request-id')).toBe('trace-12345678');
    const c = await app.call('GET', '/nope', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(c.headers.get('x-request-id')).not.toBe('bad id with spaces');
  });

  it('a body that is not JSON is 400 bad_json; a non-JSON content type is 415', async () => {
    const bad = await app.call('POST', `/api/w/${ws.slug}/tokens`, { session, rawBody: '{"name": ', headers: { 'content-type': 'application/json' } });
    expectEnvelope(bad, 400, 'invalid');
    expect(bad.body.error.details.reason).toBe('bad_json');
    const scalar = await app.call('POST', `/api/w/${ws.slug}/tokens`, { session, rawBody: '"just a string"', headers: { 'content-type': 'application/json' } });
    expectEnvelope(scalar, 400, 'invalid');
    const text = await app.call('POST', `/api/w/${ws.slug}/tokens`, { session, rawBody: 'name=x', headers: { 'content-type': 'text/plain' } });
    expectEnvelope(text, 415, 'unsupported_media_type');
  });

  it('a JSON body over the 1 MB limit is 413', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(1_100_000), scopes: ['read'] });
    const res = await app.call('POST', `/api/w/${ws.slug}/tokens`, { session, rawBody: big, headers: { 'content-type': 'application/json' } });
    expectEnvelope(res, 413, 'payload_too_large');
  });

  it('a wrong type is 400 with the field named', async () => {
    const res = await app.call('POST', `/api/w/${ws.slug}/tokens`, { session, body: { name: 42, scopes: 'read' } });
    expectEnvelope(res, 400, 'invalid');
    expect(res.body.error.details).toMatchObject({ reason: 'validation', field: 'name' });
  });

  it('an unknown slug is 404', async () => {
    expectEnvelope(await app.call('GET', '/api/w/unknown-slug/workflow', { token }), 404, 'not_found');
    expectEnvelope(await app.call('GET', '/api/w/unknown-slug/workflow', { session }), 404, 'not_found');
  });

  it('a path parameter that is not a UUID is 400', async () => {
    const res = await app.call('DELETE', `/api/w/${ws.slug}/tokens/not-a-uuid`, { session });
    expectEnvelope(res, 400, 'invalid');
    expect(res.body.error.details).toMatchObject({ reason: 'bad_uuid', field: 'id' });
  });

  it('an unknown route is 404 in the envelope', async () => {
    expectEnvelope(await app.call('GET', '/api/nothing-here'), 404, 'not_found');
  });

  it('an unexpected error is a 500 internal with no stack or SQL in the body', async () => {
    const koa = new Koa();
    koa.use(errorEnvelope(makeLogger('silent')));
    koa.use(() => {
      throw new Error('relation "secret_table" does not exist at /src/foo.ts:1');
    });
    const server = koa.listen(0);
    const port = (server.address() as { port: number }).port;
    try {
      const res = await fetch(`http://127.0.0.1:${port}/`);
      const body = await res.json();
      expect(res.status).toBe(500);
      expect(body.error.code).toBe('internal');
      expect(JSON.stringify(body)).not.toMatch(/secret_table|foo\.ts|at /);
    } finally {
      server.close();
    }
  });
});

describe('health', () => {
  it('/healthz and /readyz answer 200 on a migrated database', async () => {
    expect((await app.call('GET', '/healthz')).status).toBe(200);
    const ready = await app.call('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ ok: true });
  });
});
