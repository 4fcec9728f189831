import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { TokenVerifier } from '../src/core/auth/token-verifier.ts';
import { startCaches, stopCaches } from '../src/core/cache.ts';
import { TokenLimits } from '../src/core/limits/token-limits.ts';
import { connect, type Db } from '../src/db/connect.ts';
import { listen } from '../src/http/server.ts';
import { makeLogger } from '../src/log.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

// Issue 25: token limits count in each process and settle with PostgreSQL at most once a second,
// so a request writes nothing; every process still draws on one budget, within the stated slack.
const LIMIT = 10;
const env = { RATE_LIMIT_READS_PER_MINUTE: String(LIMIT), RATE_LIMIT_WRITES_PER_MINUTE: String(LIMIT) };
/** Longer than any test: the settle timer never fires unless a test settles itself. */
const NEVER = 3_600_000;

let app: TestApp;
let ws: Workspace;
let owner: Person;

beforeAll(async () => {
  app = await startTestApp({ env });
  ws = await makeWorkspace(app.db.sql);
  owner = await makeUser(app.db.sql, ws, { role: 'owner' });
});
afterAll(() => app.close());

const workflow = () => `/api/w/${ws.slug}/workflow`;
const rowPoints = async (key: string) => {
  const [row] = await app.db.sql<{ points: number }[]>`select points from rate_limits where key = ${key}`;
  return row?.points ?? 0;
};

/** The service over a connection that records every statement, with token limits of the test's making. */
async function countingServer(limitsOf: (sql: Db) => TokenLimits) {
  const statements: string[] = [];
  const sql = connect(app.db.url, { max: 2, debug: (_c, q) => statements.push(q) });
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', DATABASE_URL: app.db.url });
  const verifier = new TokenVerifier(sql, 60_000);
  await verifier.listen();
  const caches = await startCaches(sql);
  const limits = limitsOf(sql);
  const server: Server = await listen(buildApp({ sql, config, log: makeLogger('silent'), verifier, caches, limits }), 0, '127.0.0.1');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    limits,
    limitWrites: () => statements.filter((q) => /rate_limits/.test(q)).length,
    get: (path: string, token: string) => fetch(base + path, { headers: { authorization: `Bearer ${token}` } }),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await verifier.close();
      await stopCaches(caches);
      await limits.stop();
      await sql.end();
    },
  };
}

describe('no database write per request', () => {
  it('a burst of token reads writes rate_limits once (the window opens), then the settle adds them all in one statement', async () => {
    const N = 40;
    const s = await countingServer((sql) => new TokenLimits(sql, { readsPerMinute: 1000, writesPerMinute: 1000, settleEveryMs: NEVER }));
    try {
      const { id, token } = await makeToken(app.db.sql, ws, owner);
      for (let i = 1; i <= N; i++) {
        const res = await s.get(workflow(), token);
        expect(res.status).toBe(200);
        expect(res.headers.get('ratelimit-remaining')).toBe(String(1000 - i));
      }
      expect(s.limitWrites()).toBe(1);
      expect(await rowPoints(`token_read:${id}`)).toBe(1);
      await s.limits.settle();
      expect(s.limitWrites()).toBe(2);
      expect(await rowPoints(`token_read:${id}`)).toBe(N);
    } finally {
      await s.close();
    }
  });

  it('the timer settles by itself, and stop() sends what is left', async () => {
    const s = await countingServer((sql) => new TokenLimits(sql, { readsPerMinute: 1000, writesPerMinute: 1000, settleEveryMs: 100 }));
    const a = await makeToken(app.db.sql, ws, owner);
    const b = await makeToken(app.db.sql, ws, owner);
    try {
      for (let i = 0; i < 6; i++) for (const t of [a, b]) expect((await s.get(workflow(), t.token)).status).toBe(200);
      for (let i = 0; i < 200 && (await rowPoints(`token_read:${a.id}`)) + (await rowPoints(`token_read:${b.id}`)) < 12; i++) await sleep(50);
      expect([await rowPoints(`token_read:${a.id}`), await rowPoints(`token_read:${b.id}`)]).toEqual([6, 6]);
    } finally {
      await s.close();
    }
    const limits = new TokenLimits(app.db.sql, { readsPerMinute: 1000, writesPerMinute: 1000, settleEveryMs: NEVER });
    for (let i = 0; i < 3; i++) await limits.consume(a.id, 'write');
    expect(await rowPoints(`token_write:${a.id}`)).toBe(1);
    await limits.stop();
    expect(await rowPoints(`token_write:${a.id}`)).toBe(3);
  });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Takes reads until one is refused; returns how many were allowed. */
async function readsAllowed(limits: TokenLimits, tokenId: string, atMost = 3 * LIMIT): Promise<number> {
  let allowed = 0;
  for (let i = 0; i < atMost; i++) {
    const ok = await limits.consume(tokenId, 'read').then(
      () => true,
      (err: unknown) => {
        expect(err).toMatchObject({ code: 'rate_limited', details: { reason: 'too_many_requests' } });
        return false;
      },
    );
    if (!ok) break;
    allowed++;
  }
  return allowed;
}

describe('two processes over one database', () => {
  const two = () => [0, 1].map(() => new TokenLimits(app.db.sql, { readsPerMinute: LIMIT, writesPerMinute: LIMIT, settleEveryMs: NEVER }));

  it('a settle between them makes the limit exact', async () => {
    const [a, b] = two();
    const { id } = await makeToken(app.db.sql, ws, owner);
    expect(await readsAllowed(a!, id)).toBe(LIMIT);
    await a!.settle();
    expect(await readsAllowed(b!, id)).toBe(0);
    expect(await readsAllowed(a!, id)).toBe(0);
    await Promise.all([a!.stop(), b!.stop()]);
  });

  it('unsettled, a token goes past its limit by at most what the other process accepted since its last settle, and both refuse once settled', async () => {
    const [a, b] = two();
    const { id } = await makeToken(app.db.sql, ws, owner);
    const first = await readsAllowed(a!, id);
    // b opened its window after a's first point only: it may accept the rest of the budget once more
    const second = await readsAllowed(b!, id);
    expect(first).toBe(LIMIT);
    expect(second).toBe(LIMIT - 1);
    expect(first + second).toBeLessThanOrEqual(LIMIT + (2 - 1) * LIMIT);
    for (const p of [a!, b!, a!]) await p.settle();
    expect(await rowPoints(`token_read:${id}`)).toBe(first + second);
    expect(await readsAllowed(a!, id)).toBe(0);
    expect(await readsAllowed(b!, id)).toBe(0);
    await Promise.all([a!.stop(), b!.stop()]);
  });

  it('two web servers with their own timers: a burst across both is refused within the slack, and soon by both', async () => {
    const second = await startTestApp({ env, db: app.db });
    try {
      const { token } = await makeToken(app.db.sql, ws, owner);
      let accepted = 0;
      for (let i = 0; i < 3 * LIMIT; i++) {
        const res = await (i % 2 ? second : app).call('GET', workflow(), { token });
        expect([200, 429]).toContain(res.status);
        if (res.status === 200) accepted++;
      }
      expect(accepted).toBeGreaterThanOrEqual(LIMIT);
      expect(accepted).toBeLessThanOrEqual(2 * LIMIT);
      // within a settle interval or two both know: poll (bounded only against a hang) until both refuse
      let refusedByBoth = false;
      for (let i = 0; i < 100 && !refusedByBoth; i++) {
        const statuses = [(await app.call('GET', workflow(), { token })).status, (await second.call('GET', workflow(), { token })).status];
        accepted += statuses.filter((s) => s === 200).length;
        refusedByBoth = statuses.every((s) => s === 429);
        if (!refusedByBoth) await sleep(200);
      }
      expect(refusedByBoth).toBe(true);
      expect(accepted).toBeLessThanOrEqual(2 * LIMIT);
    } finally {
      await second.close();
    }
  });
});
