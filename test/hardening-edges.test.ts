import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Workspace } from './helpers/factories.ts';
import { rawRequest } from './helpers/raw.ts';

/** Defects the fuzz and the authorization matrix found after the first round of issue 9's fixes. */

let app: TestApp;
let ws: Workspace;
let member: SessionCookie;
let token: string;
let hiddenTicketId: string;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  const owner = await makeUser(sql, ws, { role: 'owner' });
  const m = await makeUser(sql, ws, { role: 'member' });
  const project = await makeProject(sql, ws);
  hiddenTicketId = (await makeTicket(sql, ws, { projectId: project.id })).id;
  member = await login(app, m.email, m.password);
  token = (await makeToken(sql, ws, owner)).token;
});
afterAll(() => app.close());

/** Sends raw bytes and returns what the server wrote back before closing. */
function rawSocket(base: string, bytes: string): Promise<string> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const s = net.connect(Number(url.port), url.hostname, () => s.end(bytes));
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    s.on('error', reject);
  });
}

describe('hidden is 404 before any role check', () => {
  it('POST /time/tickets/{id}/reattribute by a member on a ticket of a project they are not in', async () => {
    const res = await app.call('POST', `/api/w/${ws.slug}/time/tickets/${hiddenTicketId}/reattribute`, { session: member });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });
});

describe('a NUL in the path is found whatever else the path holds', () => {
  it.each([
    ['DELETE', '/api/w/a%00b/tickets/%/comments/75b58868-5291-4f1b-929d-62cea15cd193'],
    ['POST', '/api/w/%00/time/tickets/%%/reattribute'],
    ['GET', '/api/w/x/tickets/%zz%00'],
  ])('%s %s is 400 invalid_characters', async (method, path) => {
    const res = await rawRequest(app.base, method, path, {
      headers: { cookie: member.cookie, 'x-csrf-token': member.csrfToken, 'content-type': 'application/json' },
      body: method === 'POST' ? '{}' : undefined,
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details.reason).toBe('invalid_characters');
  });
});

describe('GET /mcp on a stateless server', () => {
  it('answers 405 with Allow: POST instead of opening an event stream nothing writes to', async () => {
    const res = await fetch(`${app.base}/mcp`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      signal: AbortSignal.timeout(5000),
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect((await res.json()).error.code).toBe(-32000);
  });
});

describe("requests Node's HTTP parser refuses", () => {
  it('a malformed request line gets 400 in the error envelope', async () => {
    const text = await rawSocket(app.base, 'GARBAGE\r\n\r\n');
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)).error.details.reason).toBe('bad_request');
  });

  it('headers over 16 KB get 431 in the error envelope', async () => {
    const text = await rawSocket(app.base, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(text).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)).error.details.reason).toBe('headers_too_large');
  });
});
