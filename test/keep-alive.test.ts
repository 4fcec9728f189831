import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { KEEP_ALIVE_TIMEOUT_MS } from '../src/http/server.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeUser, makeWorkspace, type Person } from './helpers/factories.ts';

/**
 * Issue 26, "Connections": a client that keeps a connection alive and sends its next request after
 * sitting idle for 1 to 10 seconds must get an answer on that same connection, never a reset
 * (an outside suite saw `UND_ERR_SOCKET` on a login sent over a connection idle for a few
 * seconds). The server's keep-alive timeout is 65 s (src/http/server.ts) and it says so in the
 * `Keep-Alive` header, so a client knows how long it may wait.
 */
let app: TestApp;
let person: Person;

beforeAll(async () => {
  app = await startTestApp();
  person = await makeUser(app.db.sql, await makeWorkspace(app.db.sql), { role: 'member' });
});
afterAll(() => app?.close());

interface Answer {
  status: number;
  keepAlive: string;
  reused: boolean;
}

/** One login over `agent`: its status, the Keep-Alive header, and whether it went over a kept-alive connection. */
function login(agent: http.Agent): Promise<Answer> {
  const body = JSON.stringify({ email: person.email, password: person.password });
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${app.base}/api/auth/login`,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, keepAlive: String(res.headers['keep-alive']), reused: req.reusedSocket }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

it('answers a login on a connection idle for 1, 3, 6 and 10 seconds, on that same connection', async () => {
  const results = await Promise.all(
    [1, 3, 6, 10].map(async (idleSeconds) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const first = await login(agent);
        await sleep(idleSeconds * 1000);
        const second = await login(agent);
        return { idleSeconds, first, second };
      } finally {
        agent.destroy();
      }
    }),
  );
  for (const { idleSeconds, first, second } of results) {
    expect(first, `idle ${idleSeconds} s`).toEqual({ status: 200, keepAlive: `timeout=${KEEP_ALIVE_TIMEOUT_MS / 1000}`, reused: false });
    expect(second, `idle ${idleSeconds} s`).toEqual({ status: 200, keepAlive: `timeout=${KEEP_ALIVE_TIMEOUT_MS / 1000}`, reused: true });
  }
}, 60_000);
