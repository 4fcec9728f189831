import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { timesheetRendered } from '../src/core/billing/progress.ts';
import { testDb, type TestDb } from './helpers/db.ts';
import { makeBillingRun, makePeriod, makeWorkspace } from './helpers/factories.ts';
import { startSmtpSink, type SinkEvent, type SmtpSink } from './helpers/smtp.ts';
import { spawnRole } from './helpers/roles.ts';
import { waitUntil, type Spawned } from './helpers/spawn.ts';

/**
 * Issue 20, defects 3 and 4: real `worker` processes (the Procfile role, from source) sending
 * through a real SMTP server that stalls at a chosen step, so that `kill -9` lands there. A
 * delivery whose worker dies during the job's last attempt ends in a state an operator can act
 * on (by the step it had reached) and the run finishes; one whose worker dies before the message
 * data went is sent again by another worker, with the same Message-ID, exactly once.
 */
let db: TestDb;
let smtp: SmtpSink;
const workers: Spawned[] = [];

beforeAll(async () => {
  [db, smtp] = await Promise.all([testDb(), startSmtpSink()]);
});
afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await smtp?.close();
  await db?.close();
});

/** What the workers printed, for a failure's message. */
const logs = () => workers.map((w) => w.output().slice(-3000)).join('\n---\n');
/** waitUntil, failing with what the workers printed. */
const until = <T>(what: string, check: () => Promise<T | undefined | false>, ms: number, every?: number) =>
  waitUntil(what, check, ms, every).catch((err: Error) => {
    throw new Error(`${err.message}\n${logs()}`);
  });
const alive = (p: Spawned) => p.child.exitCode === null && p.child.signalCode === null;

function startWorker(): Spawned {
  const proc = spawnRole('worker', {
    DATABASE_URL: db.url,
    WORKER: 'on',
    SMTP_URL: smtp.url,
    MAIL_FROM: 'Agentur Nord <billing@agency.test>',
    LOG_LEVEL: process.env.CRASH_LOG ?? 'warn',
    // a killed worker's jobs are taken over after 6 s without its heartbeat (30 s in production): the same path, sooner
    WORKER_STALE_SECONDS: '6',
  });
  workers.push(proc);
  return proc;
}

/** Two workers alive (a killed one is replaced), so that one survives the next kill. */
async function twoWorkers(): Promise<void> {
  while (workers.filter(alive).length < 2) startWorker();
  await waitUntil(
    'two worker heartbeats',
    async () => (await db.sql`select 1 from worker_heartbeats where cardinality(worker_ids) > 0 and beat_at > now() - interval '10 seconds'`).length >= 2,
    60_000,
  );
}

interface World {
  runId: string;
  ap: { id: string; email: string };
  cfo: { id: string; email: string };
}

let seq = 0;

/** A run with one rendered timesheet (html, csv) and two pending deliveries with their queued jobs, as the render job leaves them. */
async function makeWorld(): Promise<World> {
  const sql = db.sql;
  const n = ++seq;
  const ws = await makeWorkspace(sql);
  const [client] = await sql<{ id: string }[]>`
    insert into clients (workspace_id, name, code, locale) values (${ws.id}, 'Initech GmbH', 'INI', 'de-DE') returning id`;
  const emails = { ap: `ap-${n}@initech.test`, cfo: `cfo-${n}@initech.test` };
  for (const email of Object.values(emails))
    await sql`insert into client_billing_recipients (client_id, email, name) values (${client!.id}, ${email}, ${email})`;
  const period = await makePeriod(sql, ws, { start: '2026-10-01', end: '2026-10-31', closed: true });
  const run = await makeBillingRun(sql, ws, { periodId: period.id, status: 'rendering' });
  const [sheet] = await sql<{ id: string }[]>`
    insert into timesheets (workspace_id, run_id, client_id, scope, number, version, formats)
    values (${ws.id}, ${run.id}, ${client!.id}, 'combined', 'INI-2026-0001', 1, array['html', 'csv']) returning id`;
  for (const format of ['html', 'csv']) {
    const content = Buffer.from(`INI-2026-0001 ${format}\r\n`);
    await sql`
      insert into documents (workspace_id, run_id, client_id, scope, number, period_start, format, version, locale, checksum, bytes, content, timesheet_id)
      values (${ws.id}, ${run.id}, ${client!.id}, 'combined', 'INI-2026-0001', '2026-10-01', ${format}, 1, 'de-DE', ${`sha-${format}`},
              ${content.length}, ${content}, ${sheet!.id})`;
  }
  await timesheetRendered(sql, sheet!.id, new Date());
  const rows = await sql<{ id: string; email: string }[]>`select id, email from document_deliveries where timesheet_id = ${sheet!.id}`;
  const byEmail = (e: string) => ({ id: rows.find((r) => r.email === e)!.id, email: e });
  return { runId: run.id, ap: byEmail(emails.ap), cfo: byEmail(emails.cfo) };
}

interface Row {
  state: string;
  detail: string | null;
  messageId: string | null;
  smtpStep: string | null;
  attempts: number;
}
const deliveryRow = async (id: string) =>
  (
    await db.sql<Row[]>`
      select state, detail, message_id as "messageId", smtp_step as "smtpStep", attempts from document_deliveries where id = ${id}`
  )[0]!;
const runStatus = async (w: World) => (await db.sql<{ status: string }[]>`select status from billing_runs where id = ${w.runId}`)[0]!.status;
const jobKey = (deliveryId: string) => `documents:deliver:${deliveryId}`;
const receivedBy = (email: string) => smtp.received.filter((m) => m.envelope.to.includes(email));

/** kill -9 of the worker process whose jobs are locked with the delivery's job's lock holder. */
async function killHolder(deliveryId: string): Promise<void> {
  const holder = await waitUntil(
    'the job is locked',
    async () =>
      (await db.sql<{ lockedBy: string | null }[]>`select locked_by as "lockedBy" from graphile_worker.jobs where key = ${jobKey(deliveryId)}`)[0]?.lockedBy ??
      undefined,
    10_000,
  );
  const [beat] = await db.sql<{ processId: string }[]>`select process_id as "processId" from worker_heartbeats where ${holder} = any(worker_ids)`;
  const pid = Number(/:(\d+):[0-9a-f]+$/.exec(beat!.processId)![1]);
  const victim = workers.find((w) => w.child.pid === pid)!;
  if (!alive(victim)) return;
  process.kill(-victim.child.pid!, 'SIGKILL');
  await victim.exited;
}

describe.sequential('a worker killed with -9 in the middle of a delivery', () => {
  it("during the job's last attempt: the delivery ends unknown (after DATA) or failed (before), and the run completes", async () => {
    const w = await makeWorld();
    // Both jobs are on their last attempt when a worker takes them.
    await db.sql`update graphile_worker._private_jobs set attempts = max_attempts - 1 where key = any(${[jobKey(w.ap.id), jobKey(w.cfo.id)]}::text[])`;
    const reached = new Set<string>();
    smtp.program((e: SinkEvent) => {
      // ap: the whole message arrives, no reply ever; cfo: RCPT TO is never answered.
      if (e.step === 'data' && e.to.includes(w.ap.email)) return (reached.add('ap'), 'stall');
      if (e.step === 'rcpt' && e.to.includes(w.cfo.email)) return (reached.add('cfo'), 'stall');
      return undefined;
    });
    await twoWorkers();
    await until('both conversations stalled', async () => reached.size === 2, 60_000);
    await until('the steps are recorded', async () => (await deliveryRow(w.ap.id)).smtpStep === 'data', 10_000);
    expect(await deliveryRow(w.cfo.id)).toMatchObject({ state: 'pending', smtpStep: 'connected' });

    await killHolder(w.ap.id);
    await killHolder(w.cfo.id);
    if (workers.filter(alive).length === 0) startWorker(); // someone must be there to notice

    await until(
      'both deliveries settled',
      async () => (await db.sql`select 1 from document_deliveries where id = any(${[w.ap.id, w.cfo.id]}::uuid[]) and state = 'pending'`).length === 0,
      180_000,
      1000,
    );
    const ap = await deliveryRow(w.ap.id);
    expect(ap.state).toBe('unknown'); // the server has the whole message and never answered
    expect(ap.detail).toMatch(/may have the message/);
    expect(receivedBy(w.ap.email).map((m) => m.messageId)).toEqual([ap.messageId]);
    expect(smtp.messagesTo(w.ap.email)).toEqual([]);
    expect(await deliveryRow(w.cfo.id)).toMatchObject({ state: 'failed' }); // it never got past RCPT TO
    expect(receivedBy(w.cfo.email)).toEqual([]);
    expect(await runStatus(w)).toBe('completed');
  }, 300_000);

  it('between the sending mark and DATA: another worker sends it again, with the same Message-ID, and it arrives once', async () => {
    const w = await makeWorld();
    const reached = new Set<string>();
    smtp.program((e: SinkEvent) => {
      // ap's first conversation stalls at RCPT TO; every later one is accepted.
      if (e.step === 'rcpt' && e.to.includes(w.ap.email) && !reached.has('ap')) return (reached.add('ap'), 'stall');
      return undefined;
    });
    await twoWorkers();
    await until('the first conversation stalled', async () => reached.has('ap'), 60_000);
    const marked = await deliveryRow(w.ap.id);
    expect(marked).toMatchObject({ state: 'pending', smtpStep: 'connected', attempts: 1 });

    await until('the other delivery is sent', async () => (await deliveryRow(w.cfo.id)).state === 'sent', 30_000);
    await killHolder(w.ap.id);
    expect(workers.filter(alive).length).toBeGreaterThan(0);

    await until('the delivery is settled', async () => (await deliveryRow(w.ap.id)).state !== 'pending', 180_000, 1000);
    const ap = await deliveryRow(w.ap.id);
    expect(ap).toMatchObject({ state: 'sent', messageId: marked.messageId, attempts: 2 });
    expect(receivedBy(w.ap.email).map((m) => m.messageId)).toEqual([marked.messageId]);
    expect(smtp.messagesTo(w.ap.email)).toHaveLength(1);
    expect(await deliveryRow(w.cfo.id)).toMatchObject({ state: 'sent' });
    expect(await runStatus(w)).toBe('completed');
  }, 300_000);
});
