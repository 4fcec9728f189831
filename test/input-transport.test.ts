import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { expectRefused, tableState } from './helpers/db-state.ts';
import { rawRequest } from './helpers/raw.ts';

/**
 * Issue 9, defect 7 and transport input: bodies in broken or unknown content codings, JSON that
 * is not an object, odd charsets and headers. Each is a 4xx in the envelope (or harmlessly
 * accepted), and a refused request changes no row. Strings and dates: input-hardening.test.ts.
 */

const NOW = new Date('2024-05-15T12:00:00.000Z');
let app: TestApp;
let ws: Workspace;
let owner: Person;
let session: SessionCookie;
let token: string;
let project: { id: string };
let ticket: { id: string; humanId: string };
let w: string;

beforeAll(async () => {
  app = await startTestApp({ now: () => NOW });
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  owner = await makeUser(sql, ws, { role: 'owner' });
  project = await makeProject(sql, ws, { members: [{ person: owner }] });
  ticket = await makeTicket(sql, ws, { projectId: project.id, reporterId: owner.id, title: 'Original title' });
  session = await login(app, owner.email, owner.password);
  token = (await makeToken(sql, ws, owner)).token;
  w = `/api/w/${ws.slug}`;
});
afterAll(() => app.close());

describe('content codings (defect 7)', () => {
  const json = () => Buffer.from(JSON.stringify({ name: `Cat ${Math.random().toString(36).slice(2)}` }));
  const send = (encoding: string, body: Buffer) =>
    rawRequest(app.base, 'POST', `${w}/categories`, {
      headers: { cookie: session.cookie, 'x-csrf-token': session.csrfToken, 'content-type': 'application/json', 'content-encoding': encoding },
      body,
    });

  it('valid gzip, deflate and br bodies are inflated and accepted (the coding name is case-insensitive)', async () => {
    for (const [enc, pack] of [
      ['gzip', gzipSync],
      ['deflate', deflateSync],
      ['br', brotliCompressSync],
      ['GZIP', gzipSync],
      ['identity', (b: Buffer) => b],
    ] as const) {
      const res = await send(enc, pack(json()));
      expect(res.status, `${enc}: ${JSON.stringify(res.body)}`).toBe(201);
    }
  });

  it('a body that does not decompress is 400 bad_encoding and changes nothing', async () => {
    const before = await tableState(app.db.sql);
    for (const enc of ['gzip', 'deflate', 'br']) expectRefused(await send(enc, json()), 400, 'invalid', { reason: 'bad_encoding' });
    expectRefused(await send('gzip', gzipSync(json()).subarray(0, 12)), 400, 'invalid', { reason: 'bad_encoding' });
    expect(await tableState(app.db.sql)).toEqual(before);
  });

  it('a body that inflates past the 1 MB limit is 413', async () => {
    const bomb = gzipSync(Buffer.from(JSON.stringify({ name: 'x'.repeat(20_000_000) })));
    expectRefused(await send('gzip', bomb), 413, 'payload_too_large');
  });

  it('an unsupported content coding is 415 unsupported_encoding', async () => {
    for (const enc of ['compress', 'zstd', 'x-garbage', 'gzip, br']) {
      expectRefused(await send(enc, json()), 415, 'unsupported_media_type', { reason: 'unsupported_encoding' });
    }
  });
});

describe('malformed transport input is a 4xx, never a 500', () => {
  const post = (body: string, contentType = 'application/json') =>
    app.call('POST', `${w}/tickets`, { token, rawBody: body, headers: { 'content-type': contentType } });

  it('a JSON body that is null, a number, a string or an array where an object is expected is 400', async () => {
    for (const body of ['null', '42', '"text"', '[]', '[{"title":"x"}]', 'true']) expectRefused(await post(body), 400, 'invalid');
  });

  it('an unknown charset parameter does not break parsing (the body is read as UTF-8)', async () => {
    const res = await post(JSON.stringify({ projectId: project.id, title: 'charset foo' }), 'application/json; charset=foo');
    expect(res.status).toBe(201);
  });

  it('a body on a GET is ignored, whatever it holds', async () => {
    const res = await rawRequest(app.base, 'GET', `${w}/tickets?limit=1`, {
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{"q":"\\u0000"',
    });
    expect(res.status).toBe(200);
  });

  it('odd bytes in If-Match, X-Request-Id, Authorization and Cookie are a 4xx or ignored', async () => {
    const odd = 'a\xff\xfe\x80 "z"';
    const ifMatch = await rawRequest(app.base, 'PATCH', `${w}/tickets/${ticket.humanId}`, {
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'if-match': odd },
      body: JSON.stringify({ title: 'etag' }),
    });
    expect(ifMatch.status).toBe(412);
    const reqId = await rawRequest(app.base, 'GET', `${w}/tickets/${ticket.humanId}`, { headers: { authorization: `Bearer ${token}`, 'x-request-id': odd } });
    expect(reqId.status).toBe(200);
    expect(reqId.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const auth = await rawRequest(app.base, 'GET', `${w}/tickets/${ticket.humanId}`, { headers: { authorization: `Bearer wt_${odd}` } });
    expect(auth.status).toBe(401);
    const cookie = await rawRequest(app.base, 'GET', `${w}/tickets/${ticket.humanId}`, { headers: { cookie: `wt_session=${odd}` } });
    expect(cookie.status).toBe(401);
  });
});
