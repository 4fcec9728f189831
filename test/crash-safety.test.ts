import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDemo, type Demo } from '../src/core/demo/seed.ts';
import { connect, ensureDatabase, type Db } from '../src/db/connect.ts';
import { startEmbedded, type EmbeddedServer } from '../src/db/embedded.ts';
import { migrate } from '../src/db/migrate.ts';
import { freePort } from './setup/global.ts';
import { spawnRole } from './helpers/roles.ts';
import { waitUntil, type Spawned } from './helpers/spawn.ts';

/**
 * Issue 9, "crash safety and several processes": two `web` and two `worker` processes (the
 * Procfile roles) on a PostgreSQL of this file's own, which it stops and starts again.
 */
let dir = '';
let pgPort = 0;
let pg: EmbeddedServer | null = null;
let sql: Db;
let demo: Demo;
let url = '';
const procs: Spawned[] = [];
const webs: { base: string; proc: Spawned }[] = [];
const workers: Spawned[] = [];

const startPg = () => startEmbedded({ dir: path.join(dir, 'pg'), port: pgPort, fast: true });
const env = (extra: Record<string, string>) => ({
  DATABASE_URL: url,
  LOG_LEVEL: process.env.CRASH_LOG ?? 'warn',
  TOKEN_CACHE_SECONDS: '60',
  // a killed worker's jobs are taken over after 6 s without its heartbeat (30 s in production): the same path, sooner
  WORKER_STALE_SECONDS: '6',
  RATE_LIMIT_READS_PER_MINUTE: '1000000',
  RATE_LIMIT_WRITES_PER_MINUTE: '1000000',
  ...extra,
});
const alive = (p: Spawned) => p.child.exitCode === null && p.child.signalCode === null;

async function startWeb(): Promise<{ base: string; proc: Spawned }> {
  const port = await freePort();
  const proc = spawnRole('web', env({ PORT: String(port) }));
  procs.push(proc);
  const base = `http://127.0.0.1:${port}`;
  await waitUntil(`web on ${port}: ${proc.output()}`, async () => (await fetch(`${base}/readyz`)).ok, 30_000);
  return { base, proc };
}

function startWorker(): Spawned {
  const proc = spawnRole('worker', env({ WORKER: 'on' }));
  procs.push(proc);
  return proc;
}

const owner = () => ({ authorization: `Bearer ${demo.people.owner.token}`, 'content-type': 'application/json' });
const api = (base: string, p: string) => `${base}/api/w/${demo.slug}${p}`;

/** Holds a row lock from this test's own connection until `release()`, to keep a request or job waiting. */
async function holdLock(query: (t: Db) => Promise<unknown>): Promise<{ release: () => Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => (locked = r));
  const done = sql.begin(async (t) => {
    await query(t as unknown as Db);
    locked();
    await released;
  });
  done.catch(() => {}); // a test that failed before releasing: the server's shutdown ends it
  await isLocked;
  return { release: () => (release(), done.then(() => {})) };
}

const lockWaiters = async (like: string) => {
  const [row] = await sql<[{ n: number }]>`
    select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query ilike ${like}`;
  return row.n > 0;
};

async function expiredSessionRow(): Promise<string> {
  const [s] = await sql<[{ id: string }]>`
    insert into sessions (token_hash, identity_id, csrf_token, expires_at)
    values (decode(md5(random()::text), 'hex'), ${demo.people.owner.id}, 'x', now() - interval '2 days') returning id`;
  return s.id;
}

const addCleanupJob = async () =>
  (await sql<[{ id: string }]>`select (graphile_worker.add_job(${'sessions:cleanup'}::text, ${'{}'}::json)).id::text as id`)[0].id;
const jobLockedBy = async (id: string) =>
  (await sql<{ locked_by: string | null }[]>`select locked_by from graphile_worker.jobs where id = ${id}::bigint`)[0]?.locked_by;
const jobGone = async (id: string) => (await sql`select 1 from graphile_worker.jobs where id = ${id}::bigint`).length === 0;

/** The spawned worker whose jobs are locked with `workerId`, through its heartbeat row (pid in the process id). */
async function workerProcess(workerId: string): Promise<Spawned> {
  const [row] = await sql<{ process_id: string }[]>`select process_id from worker_heartbeats where ${workerId} = any(worker_ids)`;
  if (!row) throw new Error(`no heartbeat names ${workerId}: ${JSON.stringify(await sql`select * from worker_heartbeats`)}`);
  const pid = Number(/:(\d+):[0-9a-f]+$/.exec(row!.process_id)![1]);
  return workers.find((w) => w.child.pid === pid)!;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'wt-crash-'));
  await chmod(dir, 0o777);
  pgPort = await freePort();
  pg = await startPg();
  await ensureDatabase(pg.url('postgres'), 'wt_crash');
  url = pg.url('wt_crash');
  sql = connect(url, { max: 4 });
  await migrate(sql, url);
  demo = await ensureDemo(sql);
  workers.push(startWorker(), startWorker());
  webs.push(...(await Promise.all([startWeb(), startWeb()])));
  await waitUntil(
    'two worker heartbeats',
    async () => {
      const rows = await sql`select 1 from worker_heartbeats where cardinality(worker_ids) > 0`;
      return rows.length === 2;
    },
    30_000,
  );
}, 90_000);

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop()));
  await sql?.end({ timeout: 1 });
  await pg?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe.sequential('crash safety with two web and two worker processes', () => {
  it('kill -9 of a web process under write load: every acknowledged ticket is there, whole', async () => {
    const acked = new Map<string, string>();
    const statuses = new Map<number, number>();
    const tag = `crash-${Date.now()}`;
    let stopAt = Date.now() + 6000;
    const client = async (c: number) => {
      let target = c % webs.length;
      for (let k = 0; Date.now() < stopAt; k++) {
        const title = `${tag}-${c}-${k}`;
        try {
          const res = await fetch(api(webs[target]!.base, '/tickets'), {
            method: 'POST',
            headers: owner(),
            body: JSON.stringify({ projectId: demo.projects[0]!.id, title }),
          });
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          const body = (await res.json()) as { id: string };
          if (res.status === 201) acked.set(title, body.id);
        } catch {
          target = (target + 1) % webs.length; // the connection died with the process: try the other one
        }
      }
    };
    const load = Promise.all(Array.from({ length: 16 }, (_, c) => client(c)));
    await waitUntil('some acknowledged writes', async () => acked.size >= 50, 20_000);
    const victim = webs[0]!.proc;
    process.kill(-victim.child.pid!, 'SIGKILL');
    const killedAt = acked.size;
    stopAt = Date.now() + 2000;
    await load;
    await victim.exited;
    expect(acked.size).toBeGreaterThan(killedAt); // the other process kept acknowledging writes
    expect([...statuses.keys()].filter((s) => s !== 201)).toEqual([]);

    const rows = await sql<{ id: string; title: string; created: number; changes: number; refs: number }[]>`
      select t.id, t.title,
             (select count(*) from ticket_events e where e.ticket_id = t.id and e.kind = 'created')::int as created,
             (select count(*) from ticket_changes c where c.ticket_id = t.id and c.kind = 'created' and c.seq is not null)::int as changes,
             (select count(*) from ticket_refs r where r.ticket_id = t.id)::int as refs
      from tickets t where t.title like ${tag + '-%'}`;
    const byTitle = new Map(rows.map((r) => [r.title, r]));
    expect(byTitle.size).toBe(rows.length); // no write landed twice
    for (const [title, id] of acked) expect(byTitle.get(title)?.id, title).toBe(id);
    for (const r of rows)
      expect({ title: r.title, created: r.created, changes: r.changes, refs: r.refs }).toEqual({ title: r.title, created: 1, changes: 1, refs: 1 });
    // A supervisor would start the web process again; so do we, for the next steps.
    webs[0] = await startWeb();
  }, 60_000);

  it('PostgreSQL restart: 503 unavailable during the outage, /readyz says why, recovery without a restart', async () => {
    const ticketsUrl = (w: { base: string }) => api(w.base, '/tickets?limit=5');
    const readOnly = { authorization: `Bearer ${demo.tokens.readOnly}` };
    for (const w of webs) {
      expect((await fetch(ticketsUrl(w), { headers: owner() })).status).toBe(200);
      expect((await fetch(api(w.base, '/workflow'), { headers: readOnly })).status).toBe(200); // now cached for 60 s
    }

    await pg!.stop();
    for (let round = 0; round < 3; round++) {
      for (const w of webs) {
        const began = Date.now();
        const res = await fetch(ticketsUrl(w), { headers: owner() });
        const post = await fetch(api(w.base, '/tickets'), { method: 'POST', headers: owner(), body: JSON.stringify({ projectId: null, title: 'x' }) });
        expect(Date.now() - began).toBeLessThan(10_000);
        for (const r of [res, post]) {
          expect(r.status).toBe(503);
          expect(r.headers.get('retry-after')).toBeTruthy();
          expect(((await r.json()) as { error: { code: string } }).error.code).toBe('unavailable');
        }
        const ready = await fetch(`${w.base}/readyz`);
        expect(ready.status).toBe(503);
        expect(await ready.json()).toEqual({ ok: false, reason: 'database_unreachable' });
        expect((await fetch(`${w.base}/healthz`)).status).toBe(200);
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
    expect([...webs.map((w) => w.proc), ...workers].every(alive)).toBe(true);

    pg = await startPg();
    for (const w of webs) await waitUntil('requests succeed again', async () => (await fetch(ticketsUrl(w), { headers: owner() })).status === 200, 30_000);
    for (const w of webs) expect((await fetch(`${w.base}/readyz`)).status).toBe(200);

    // Each web process's LISTEN came back: a revocation reaches the token cache at once.
    const [t] = await sql<[{ id: string }]>`
      update api_tokens set revoked_at = now() where token_hash = sha256(convert_to(${demo.tokens.readOnly}, 'utf8')) returning id`;
    for (const w of webs)
      await waitUntil(
        'revocation through NOTIFY',
        async () => {
          await sql`select pg_notify('wt_token_revoked', ${t.id})`;
          return (await fetch(api(w.base, '/workflow'), { headers: readOnly })).status === 401;
        },
        15_000,
        500,
      );

    // The workers survived and take jobs again.
    const job = await addCleanupJob();
    await waitUntil('a job after the restart', () => jobGone(job), 30_000);
    expect([...webs.map((w) => w.proc), ...workers].every(alive)).toBe(true);
  }, 90_000);

  it('a worker killed with -9 while it runs a job: another worker finishes the job within a minute', async () => {
    const session = await expiredSessionRow();
    const lock = await holdLock((t) => t`select 1 from sessions where id = ${session} for update`);
    const job = await addCleanupJob();
    const holder = await waitUntil('the job is taken', () => jobLockedBy(job).then((w) => w ?? undefined), 20_000);
    await waitUntil('the job waits on the lock', () => lockWaiters('delete from sessions%'), 10_000);
    const victim = await workerProcess(holder);
    process.kill(-victim.child.pid!, 'SIGKILL');
    await victim.exited;
    const killedAt = Date.now();
    await lock.release();
    await waitUntil('the other worker completes the job', () => jobGone(job), 60_000, 500);
    expect(Date.now() - killedAt).toBeLessThan(60_000);
    expect(alive(workers.find((w) => w !== victim)!)).toBe(true);
  }, 90_000);

  it('SIGTERM drains: an in-flight request gets its answer, a running job completes, exit code 0', async () => {
    const web = webs[1]!;
    const [ticket] = await sql<[{ id: string }]>`select id from tickets where project_id = ${demo.projects[0]!.id} limit 1`;
    const rowLock = await holdLock((t) => t`select 1 from tickets where id = ${ticket.id} for update`);
    const slow = fetch(api(web.base, `/tickets/${ticket.id}`), { method: 'PATCH', headers: owner(), body: JSON.stringify({ title: 'Drained' }) });
    await waitUntil('the request waits on the lock', () => lockWaiters('%'), 10_000);

    const session = await expiredSessionRow();
    const jobLock = await holdLock((t) => t`select 1 from sessions where id = ${session} for update`);
    const job = await addCleanupJob();
    const worker = await workerProcess(await waitUntil('the job is taken', () => jobLockedBy(job).then((w) => w ?? undefined), 20_000));
    await waitUntil('the job waits on the lock', () => lockWaiters('delete from sessions%'), 10_000);

    process.kill(web.proc.child.pid!, 'SIGTERM');
    process.kill(worker.child.pid!, 'SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    expect({ web: alive(web.proc), worker: alive(worker) }).toEqual({ web: true, worker: true }); // both wait for their work
    await rowLock.release();
    await jobLock.release();

    const res = await slow;
    expect(res.status).toBe(200);
    expect(((await res.json()) as { title: string }).title).toBe('Drained');
    expect(await web.proc.exited).toBe(0);
    expect(await worker.exited).toBe(0);
    expect(await jobGone(job)).toBe(true); // completed, not failed and left for a retry
  }, 60_000);
});
