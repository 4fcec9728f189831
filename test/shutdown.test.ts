import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { testDb, type TestDb } from './helpers/db.ts';
import { makeProject, makeToken, makeUser, makeWorkspace } from './helpers/factories.ts';
import { spawnRole } from './helpers/roles.ts';
import { waitUntil, type Spawned } from './helpers/spawn.ts';
import { freePort } from './setup/global.ts';

/**
 * Issue 20, defect 5: SIGTERM to a web process under load reset requests whose bytes had been
 * sent on kept-alive connections (the drain closed every idle connection at once, every 100 ms).
 */
let db: TestDb;
let web: Spawned | undefined;

beforeAll(async () => {
  db = await testDb();
}, 60_000);
afterAll(async () => {
  await web?.stop();
  await db?.close();
});

type Outcome = { status: number; close: boolean } | { error: string };

/** One request on `agent`; resolves with the answer or the error's code, never rejects. */
function request(agent: http.Agent, port: number, method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, close: res.headers.connection === 'close' }));
      res.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    req.end(body);
  });
}

it('SIGTERM under keep-alive load: every request that reached the process is answered, none is reset', async () => {
  const ws = await makeWorkspace(db.sql);
  const owner = await makeUser(db.sql, ws, { role: 'owner' });
  const project = await makeProject(db.sql, ws, { members: [{ person: owner }] });
  const { token } = await makeToken(db.sql, ws, owner);
  const port = await freePort();
  web = spawnRole('web', {
    DATABASE_URL: db.url,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    RATE_LIMIT_READS_PER_MINUTE: '1000000',
    RATE_LIMIT_WRITES_PER_MINUTE: '1000000',
  });
  // a bound only against a hang: on a loaded 2-core machine the process starts from source slowly
  await waitUntil(`web /readyz: ${web.output()}`, async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok, 120_000);

  const auth = { authorization: `Bearer ${token}` };
  const outcomes: { afterSignal: boolean; outcome: Outcome }[] = [];
  let signalled = false;
  let exited = false;
  void web.exited.then(() => (exited = true));
  const client = async (c: number) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    for (let k = 0; !exited; k++) {
      const afterSignal = signalled;
      const outcome =
        k % 3 === 0
          ? await request(
              agent,
              port,
              'POST',
              `/api/w/${ws.slug}/tickets`,
              { ...auth, 'content-type': 'application/json', 'idempotency-key': `shutdown-${c}-${k}` },
              JSON.stringify({ projectId: project.id, title: `shutdown ${c}-${k}` }),
            )
          : await request(agent, port, 'GET', `/api/w/${ws.slug}/workflow`, auth);
      outcomes.push({ afterSignal, outcome });
      // Refused connections (the listener is closed) carried no request; stop knocking once refused.
      if ('error' in outcome && outcome.error === 'ECONNREFUSED') break;
      await new Promise((r) => setTimeout(r, c % 4)); // a little idle time on each kept-alive connection
    }
    agent.destroy();
  };
  const load = Promise.all(Array.from({ length: 8 }, (_, c) => client(c)));
  // A kept-alive connection that is idle when the signal comes, and sends its next request just after.
  const idle = net.connect(port, '127.0.0.1');
  let received = '';
  idle.on('data', (d) => (received += d));
  const idleClosed = new Promise<void>((r) => idle.on('close', () => r()));
  idle.on('error', (e: NodeJS.ErrnoException) => (received += `\n[${e.code}]`));
  idle.write(`GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`);
  await waitUntil('the first answer on the idle connection', async () => received.includes('{"ok":true}'), 10_000, 10);
  await waitUntil('requests before the signal', async () => outcomes.length >= 200, 30_000, 20);
  process.kill(web.child.pid!, 'SIGTERM');
  signalled = true;
  const drainBegan = (o: { afterSignal: boolean; outcome: Outcome }) =>
    o.afterSignal && ('close' in o.outcome ? o.outcome.close : o.outcome.error === 'ECONNREFUSED');
  await waitUntil('the drain began', async () => outcomes.some(drainBegan), 10_000, 5);
  received = '';
  idle.write(`GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`);
  await idleClosed;
  expect(received).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  expect(received.toLowerCase()).toContain('connection: close');
  expect(received).toContain('{"ok":true}');
  expect(await web.exited).toBe(0);
  await load;

  const failed = outcomes.filter((o) => 'error' in o.outcome && o.outcome.error !== 'ECONNREFUSED');
  expect(failed.map((o) => o.outcome)).toEqual([]);
  const answered = outcomes.filter((o) => 'status' in o.outcome);
  expect(answered.filter((o) => 'status' in o.outcome && o.outcome.status >= 500).map((o) => o.outcome)).toEqual([]);
  // Requests that arrived during the drain were answered, and told that the connection closes.
  expect(answered.some((o) => o.afterSignal && 'close' in o.outcome && o.outcome.close)).toBe(true);
}, 180_000);
