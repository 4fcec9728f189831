import { spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, waitUntil } from './helpers/spawn.ts';
import { tcpProxy, type TcpProxy } from './helpers/tcp-proxy.ts';
import { testDb, type TestDb } from './helpers/db.ts';
import { connect, isConnectionError } from '../src/db/connect.ts';

/**
 * Issue 20, defect 1: postgres.js 3.4.9 wrote to a connection's socket after it was nulled (a
 * transaction's rollback on a connection that had just closed, or a write left behind by a close),
 * which threw outside any promise and ended the process. Fixed by patches/postgres+3.4.9.patch.
 */
let db: TestDb;
let proxy: TcpProxy;

beforeAll(async () => {
  db = await testDb();
  const u = new URL(db.url);
  proxy = await tcpProxy({ host: u.hostname, port: Number(u.port) });
});

afterAll(async () => {
  await proxy?.close();
  await db?.close();
});

describe('the database connection breaking under load', () => {
  it('the process stays alive, and every connection of its pool works again afterwards', async () => {
    const u = new URL(db.url);
    u.port = String(proxy.port);
    const child = spawn('node', ['--import', 'tsx', 'test/helpers/pg-load-child.ts'], {
      env: cleanEnv({ DATABASE_URL: u.toString() }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    const alive = () => child.exitCode === null && child.signalCode === null;
    const counts = () => {
      const m = [...out.matchAll(/ok (\d+) failed (\d+)/g)].at(-1);
      return { ok: Number(m?.[1] ?? 0), failed: Number(m?.[2] ?? 0) };
    };
    try {
      await waitUntil(`load through the proxy: ${out}`, async () => counts().ok > 100, 30_000);
      for (let cut = 0; cut < 10 && alive(); cut++) {
        await waitUntil('connections through the proxy', async () => proxy.open() >= 3 || !alive(), 10_000, 10);
        proxy.cut();
        await new Promise((r) => setTimeout(r, 300));
      }
      expect(alive(), out).toBe(true);

      // A connection left with a write behind it never sent its startup message again and failed
      // every query given to it with CONNECT_TIMEOUT (5 s): no failure may come after recovery.
      const before = counts();
      await waitUntil('queries succeed again', async () => counts().ok > before.ok + 100, 30_000);
      const recovered = counts();
      await new Promise((r) => setTimeout(r, 6_000));
      expect(counts().failed, out.slice(-2000)).toBe(recovered.failed);
      expect(counts().ok).toBeGreaterThan(recovered.ok);
      expect(alive(), out).toBe(true);
    } finally {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
  }, 90_000);

  it('a connection that closes with a write scheduled connects again (it stayed poisoned: CONNECT_TIMEOUT for ever)', async () => {
    const u = new URL(db.url);
    const sockets: net.Socket[] = [];
    // The driver's own sockets (its `socket` option, which its types leave out), so that two can be
    // closed in one tick: the first one's close fails its query, whose handler sends the next query
    // on the second connection just before that one closes.
    const socket = () => {
      const s = net.connect(Number(u.port), u.hostname);
      sockets.push(s);
      return s;
    };
    const options = { max: 2, connect_timeout: 2, onnotice: () => {}, socket };
    const sql = postgres(db.url, options);
    try {
      for (const order of ['busy first', 'idle first'] as const) {
        await Promise.all([sql`select pg_sleep(0.1)`, sql`select pg_sleep(0.1)`]);
        const live = sockets.filter((s) => !s.destroyed);
        expect(live).toHaveLength(2);
        const written = live.map((s) => s.bytesWritten);
        const failed = sql`select pg_sleep(5)`.execute();
        failed.catch(() => sql`select 1`.execute().catch(() => {}));
        await waitUntil('the query is sent', async () => live.some((s, i) => s.bytesWritten > written[i]!), 5000, 10);
        const busy = live.find((s, i) => s.bytesWritten > written[i]!)!;
        const idle = live.find((s) => s !== busy)!;
        const closed = Promise.all([busy, idle].map((s) => once(s, 'close')));
        for (const s of order === 'busy first' ? [busy, idle] : [idle, busy]) s.destroy();
        await expect(failed).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
        await closed;
        // Both connections must serve again: two queries at once need both.
        const results = await Promise.allSettled([sql`select pg_sleep(0.2)`, sql`select pg_sleep(0.2)`]);
        expect(
          results.map((r) => (r.status === 'rejected' ? (r.reason as { code?: string }).code : r.status)),
          order,
        ).toEqual(['fulfilled', 'fulfilled']);
      }
    } finally {
      await sql.end({ timeout: 1 });
    }
  });

  it('a connection reset while it fetches the array types fails its query and leaves no rejection unhandled', async () => {
    // Every new connection first asks for the array types (postgres.js `fetch_types`); a reset then
    // rejected that internal query where nothing awaited it, and Node ended the process (the CI
    // failure of test above: `read ECONNRESET` from triggerUncaughtException).
    const u = new URL(db.url);
    let resets = 2;
    const typesProxy = await tcpProxy({ host: u.hostname, port: Number(u.port) }, { resetWhen: (chunk) => chunk.includes('typcategory') && resets-- > 0 });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    u.port = String(typesProxy.port);
    const sql = connect(u.toString(), { max: 1 });
    try {
      // each query's new connection is reset while it fetches the types: the query fails, nothing else
      for (const query of [sql`select 1 as one`, sql`select 2 as two`]) {
        const failed = await query.catch((err: unknown) => err);
        expect(isConnectionError(failed), String(failed)).toBe(true);
      }
      expect(resets).toBe(0);
      // Works again once the connection is left alone, and array types are parsed.
      const [row] = await sql<{ xs: number[] }[]>`select array[1, 2]::int[] as xs`;
      expect(row!.xs).toEqual([1, 2]);
      await new Promise((r) => setTimeout(r, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await sql.end({ timeout: 1 });
      await typesProxy.close();
    }
  });
});
