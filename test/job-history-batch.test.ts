import { randomUUID } from 'node:crypto';
import net from 'node:net';
import type { JobHelpers } from 'graphile-worker';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pollJob } from '../src/core/jobs/catalog.ts';
import { enqueue } from '../src/core/jobs/enqueue.ts';
import { connect, type Db } from '../src/db/connect.ts';
import { JobHistory } from '../src/jobs/history.ts';
import { startWorker } from '../src/jobs/worker.ts';
import { makeLogger } from '../src/log.ts';
import { testDb, type TestDb } from './helpers/db.ts';
import { freePort } from './setup/global.ts';
import { makeWorkspace, type Workspace } from './helpers/factories.ts';

/**
 * Issue 25: the worker records every attempt in job_history without two statements per attempt:
 * rows wait in the process and one statement writes a batch (src/jobs/history.ts).
 */
let db: TestDb;
let ws: Workspace;
const log = makeLogger('silent');

beforeAll(async () => {
  db = await testDb();
  ws = await makeWorkspace(db.sql);
});
afterAll(() => db.close());

const helpersFor = (id: string, task = 'test:history', attempts = 1) =>
  ({ job: { id, task_identifier: task, key: `key-${id}`, attempts, max_attempts: 3, locked_by: 'history-test' } }) as unknown as JobHelpers;

it('a burst of jobs through a worker: one row per attempt with its outcome, written in far fewer statements than attempts', async () => {
  const statements: string[] = [];
  const counted: Db = connect(db.url, { max: 4, debug: (_c, q) => statements.push(q) });
  const services = {
    sql: counted,
    now: () => new Date(),
    log,
    pdf: null,
    mailer: { send: () => Promise.reject(new Error('no mail is sent here')) },
    mailFrom: 'Support <support@agency.test>',
  };
  const N = 200;
  // polls of mailboxes that do not exist: skipped, each job succeeds at once
  const payloads = Array.from({ length: N }, () => ({ workspaceId: ws.id, mailboxId: randomUUID() }));
  for (const p of payloads) await enqueue(db.sql, pollJob, p);
  const keys = payloads.map((p) => pollJob.key(p));
  const worker = await startWorker(db.url, services, { concurrency: 4, pollInterval: 100 });
  try {
    await expect
      .poll(async () => (await db.sql`select 1 from graphile_worker.jobs where key = any(${keys})`).length, { timeout: 60_000, interval: 100 })
      .toBe(0);
  } finally {
    await worker.stop(); // writes what still waits
    await counted.end();
  }
  const rows = await db.sql<{ key: string; outcome: string; workspace: string; n: number }[]>`
    select job_key as key, outcome, workspace_id as workspace, count(*) over (partition by job_key)::int as n
    from job_history where job_key = any(${keys})`;
  expect(rows).toHaveLength(N);
  expect(new Set(rows.map((r) => `${r.outcome} ${r.workspace} ${r.n}`))).toEqual(new Set([`succeeded ${ws.id} 1`]));
  // the succeeded jobs' queued_jobs rows went with their history rows
  expect(await db.sql`select 1 from queued_jobs q join job_history h on h.job_id = q.job_id where h.job_key = any(${keys})`).toHaveLength(0);
  // before: an insert when each attempt started and an update when it ended (2 x N)
  const historyStatements = statements.filter((q) => /\b(insert into|update) job_history\b/.test(q)).length;
  expect(historyStatements).toBeGreaterThan(0);
  expect(historyStatements).toBeLessThan(N / 2);
}, 120_000);

it('an attempt still running at a flush has a running row, which a later flush completes (one row, its outcome and duration)', async () => {
  const history = new JobHistory(db.sql, log, { delayMs: 20 });
  const id = String(Date.now());
  const attempt = history.attempt(helpersFor(id), { workspaceId: ws.id, runId: randomUUID() }, ws.id);
  await expect
    .poll(async () => (await db.sql`select outcome from job_history where job_id = ${id}`).map((r) => r.outcome), { timeout: 10_000 })
    .toEqual(['running']);
  await attempt.finish('failed', 'went wrong');
  await history.stop();
  const rows =
    await db.sql`select outcome, error, finished_at is not null as finished, duration_ms >= 0 as timed, workspace_id as ws from job_history where job_id = ${id}`;
  expect(rows).toEqual([{ outcome: 'failed', error: 'went wrong', finished: true, timed: true, ws: ws.id }]);
});

it('a retry written in the same flush as the attempt before it follows that attempt', async () => {
  const history = new JobHistory(db.sql, log, { delayMs: 60_000 });
  const id = String(Date.now() + 1);
  await history.attempt(helpersFor(id, 'test:history', 1), {}, null).finish('failed', 'first');
  await history.attempt(helpersFor(id, 'test:history', 2), {}, null).finish('succeeded', null);
  await history.stop();
  const [first, second] = await db.sql<{ id: string; follows: string | null; attempt: number }[]>`
    select id::text, follows_id::text as follows, attempt from job_history where job_id = ${id} order by id`;
  expect([first!.attempt, second!.attempt]).toEqual([1, 2]);
  expect(second!.follows).toBe(first!.id);
});

it('a row PostgreSQL refuses is lost alone: the other rows of its flush are written', async () => {
  const history = new JobHistory(db.sql, log, { delayMs: 60_000 });
  const base = Date.now() + 2;
  await history.attempt(helpersFor(String(base)), { n: 1 }, null).finish('succeeded', null);
  // a NUL character: json accepts it, text and jsonb do not
  await history.attempt(helpersFor(String(base + 1)), { n: 2 }, null).finish('failed', 'bad \u0000 byte');
  await history.attempt(helpersFor(String(base + 2)), { n: 3 }, null).finish('succeeded', null);
  await history.stop();
  const rows =
    await db.sql`select job_id::text as id from job_history where job_id = any(${[String(base), String(base + 1), String(base + 2)]}::bigint[]) order by job_id`;
  expect(rows.map((r) => r.id)).toEqual([String(base), String(base + 2)]);
});

it('rows wait while PostgreSQL cannot be reached, and are written once it answers', async () => {
  // the history's connection goes through a port nobody listens on yet (connection refused), then to the database
  const port = await freePort();
  const target = new URL(db.url);
  const url = new URL(db.url);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  const away = connect(url.toString(), { max: 1 });
  const history = new JobHistory(away, log, { delayMs: 20 });
  const id = String(Date.now() + 10);
  await history.attempt(helpersFor(id), { n: 1 }, null).finish('succeeded', null);
  await history.flush(); // refused: the row is kept
  expect(await db.sql`select 1 from job_history where job_id = ${id}`).toHaveLength(0);
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((ok) => server.listen(port, '127.0.0.1', ok));
  try {
    // the kept row is tried again by itself (once a second)
    await expect
      .poll(async () => (await db.sql`select outcome from job_history where job_id = ${id}`).map((r) => r.outcome), { timeout: 20_000 })
      .toEqual(['succeeded']);
  } finally {
    await away.end({ timeout: 1 });
    await new Promise((ok) => server.close(ok));
  }
}, 60_000);
