import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mailFromConfig } from '../src/jobs/machinery/mail-from-config.ts';
import type { Outbox } from '../src/jobs/machinery/outbox-server.ts';
import { startWorker, type StartedWorker } from '../src/jobs/worker.ts';
import { makeLogger } from '../src/log.ts';
import { billingPages } from '../src/ops/pages/billing.ts';
import { jobPages } from '../src/ops/pages/jobs.ts';
import { operatorPages } from '../src/ops/pages/operators.ts';
import { otherPages } from '../src/ops/pages/other.ts';
import { foreign, workspaceState, type Identifying } from './authz/tenant.ts';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import {
  makeClient,
  makePeriod,
  makeProject,
  makeTicket,
  makeTimeEntry,
  makeToken,
  makeUser,
  makeWorkspace,
  type Person,
  type Workspace,
} from './helpers/factories.ts';
import { mcpClient } from './helpers/mcp.ts';

/**
 * Tenancy of what the jobs produce (issue 19): two workspaces on one app, one worker and one
 * local outbox, each billed for real through the console (allocation, rendering, delivery by
 * SMTP into the outbox), each with a mailbox and an intake log entry, job history and audit rows.
 * Every page of the console, as the other workspace's owner and admin, names nothing of the
 * first: no ticket title, client name, document number or id, email, recipient address, intake
 * subject or sender, run id or mailbox account. The REST reads of those artefacts and MCP
 * resources are held to the same rule.
 */

let app: TestApp;
let outbox: Outbox;
let outboxDir: string;
let worker: StartedWorker;
let a: Tenant;
let b: Tenant;

interface Tenant {
  ws: Workspace;
  owner: Person;
  admin: Person;
  ownerSession: SessionCookie;
  adminSession: SessionCookie;
  ownerToken: string;
  period: string;
  runId: string;
  jobId: string;
  /** A job of the workspace that failed for good and stays queued. */
  failedJob: string;
  documentIds: string[];
  strings: Identifying[];
}

const secret = (what: string) => `${what}-${randomUUID()}`;

/** A workspace with a client, time in a closed period, a mailbox with an intake entry, billed through the console. */
async function tenant(tag: string): Promise<Tenant> {
  const sql = app.db.sql;
  const ws = await makeWorkspace(sql);
  const ownerName = secret(`Owner${tag}`);
  const owner = await makeUser(sql, ws, { role: 'owner', name: ownerName });
  const admin = await makeUser(sql, ws, { role: 'admin', name: secret(`Admin${tag}`) });
  const member = await makeUser(sql, ws, { role: 'member' });
  const clientName = secret(`Client${tag}`);
  // billed and emailed at once (issue 23: a new client would wait for the run's approval)
  const client = await makeClient(sql, ws, { name: clientName, delivery: 'automatic' });
  const recipient = `billing-${randomUUID()}@client-${tag.toLowerCase()}.test`;
  await sql`insert into client_billing_recipients (client_id, email, name) values (${client.id}, ${recipient}, ${secret('Recipient')})`;
  // the same project key in both workspaces: human ids collide on purpose
  const project = await makeProject(sql, ws, { key: 'WEB', billingClientId: client.id, members: [{ person: member }] });
  const title = secret(`Ticket${tag}`);
  const ticket = await makeTicket(sql, ws, { projectId: project.id, title, reporterId: owner.id });
  const period = await makePeriod(sql, ws, { start: '2026-10-01', end: '2026-10-31', closed: true, closedBy: owner.id });
  await makeTimeEntry(sql, ws, { ticketId: ticket.id, userId: member.id, spentOn: '2026-10-02', minutes: 90 });
  const mailUser = `support-${randomUUID()}@agency-${tag.toLowerCase()}.test`;
  const [mb] = await sql<{ id: string }[]>`
    insert into mailboxes (workspace_id, host, port, secure, username, password_sealed, uid_validity, last_uid, enabled)
    values (${ws.id}, ${`imap-${tag.toLowerCase()}.agency.test`}, 993, true, ${mailUser}, '\\x00'::bytea, 42, 7, false) returning id`;
  const subject = secret(`Intake${tag}`);
  const sender = `stranger-${randomUUID()}@else.test`;
  await sql`
    insert into intake_messages (workspace_id, mailbox_id, dedupe_key, from_address, subject, received_at, status, reason)
    values (${ws.id}, ${mb!.id}, 'k1', ${sender}, ${subject}, now(), 'quarantined', 'sender_unknown')`;

  const ownerSession = await login(app, owner.email, owner.password);
  const adminSession = await login(app, admin.email, admin.password);
  // the run is started in the console: an audit row, then allocation, rendering and delivery by the worker
  const res = await fetch(`${app.base}/ops/billing/runs`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: ownerSession.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: ownerSession.csrfToken, periodId: period.id, confirm: 'start' }),
  });
  expect(res.status, await res.text()).toBe(303);
  const runId = new URL(res.headers.get('location')!, app.base).pathname.split('/').at(-1)!;
  const { token: ownerToken } = await makeToken(sql, ws, owner, { scopes: ['read'] });
  // A job of this workspace that fails for good and stays in the queue (the console's failed
  // list): queued as the core's enqueue does (sql/076), with a payload no task accepts.
  const jobKey = secret(`FailedJob${tag}`);
  const payload = JSON.stringify({ workspaceId: ws.id, runId: 'not-a-run' });
  await sql`
    with job as (select (graphile_worker.add_job('billing:allocate', ${payload}::text::json, job_key => ${jobKey}::text, max_attempts => 1)).id)
    insert into queued_jobs (job_id, workspace_id, task, payload) select job.id, ${ws.id}::uuid, 'billing:allocate', ${payload}::text::jsonb from job`;
  return {
    ws,
    owner,
    admin,
    ownerSession,
    adminSession,
    ownerToken,
    period: period.id,
    runId,
    jobId: '',
    failedJob: '',
    documentIds: [],
    strings: [
      { text: ws.id, what: 'workspace id' },
      { text: ws.slug, what: 'workspace slug' },
      { text: ownerName, what: 'owner name' },
      ...[owner, admin, member].flatMap((p) => [
        { text: p.email, what: `${p.role} email` },
        { text: p.id, what: `${p.role} id` },
      ]),
      { text: clientName, what: 'client name' },
      { text: client.id, what: 'client id' },
      { text: recipient, what: 'recipient address' },
      { text: title, what: 'ticket title' },
      { text: ticket.id, what: 'ticket id' },
      { text: project.id, what: 'project id' },
      { text: period.id, what: 'period id' },
      { text: runId, what: 'billing run id' },
      { text: jobKey, what: 'failed job key' },
      { text: mailUser, what: 'mailbox account' },
      { text: subject, what: 'intake subject' },
      { text: sender, what: 'intake sender' },
    ],
  };
}

/** Waits until the run's deliveries are sent, then records what the jobs produced: documents, numbers, a job id. */
async function settle(t: Tenant): Promise<void> {
  const sql = app.db.sql;
  const deadline = Date.now() + 90_000; // only to stop a hang
  for (;;) {
    const [r] = await sql<{ n: number; sent: number; failed: number }[]>`
      select count(*)::int as n, count(*) filter (where state = 'sent')::int as sent, count(*) filter (where state <> 'sent' and state <> 'pending')::int as failed
      from document_deliveries where workspace_id = ${t.ws.id}`;
    if (r!.n > 0 && r!.n === r!.sent) break;
    if (r!.failed > 0 || Date.now() > deadline) throw new Error(`run ${t.runId}: deliveries not all sent: ${JSON.stringify(r)}`);
    await new Promise((ok) => setTimeout(ok, 250));
  }
  const key = t.strings.find((s) => s.what === 'failed job key')!.text;
  for (;;) {
    const [j] = await sql<{ id: string; lastError: string | null }[]>`select id::text, last_error as "lastError" from graphile_worker.jobs where key = ${key}`;
    if (j?.lastError) {
      t.failedJob = j.id;
      break;
    }
    if (Date.now() > deadline) throw new Error(`the failing job of ${t.ws.slug} never failed`);
    await new Promise((ok) => setTimeout(ok, 250));
  }
  const docs = await sql<{ id: string; number: string }[]>`select id, number from documents where workspace_id = ${t.ws.id}`;
  t.documentIds = docs.map((d) => d.id);
  for (const d of docs) t.strings.push({ text: d.id, what: 'document id' }, { text: d.number, what: 'document number' });
  const [job] = await sql<
    { jobId: string }[]
  >`select job_id::text as "jobId" from job_history where workspace_id = ${t.ws.id} and run_id = ${t.runId} and job_id is not null order by id limit 1`;
  t.jobId = job!.jobId;
}

beforeAll(async () => {
  outboxDir = await mkdtemp(path.join(os.tmpdir(), 'wt-tenancy-outbox-'));
  app = await startTestApp({ env: { OUTBOX_DIR: outboxDir } });
  const log = makeLogger('silent');
  // the worker's mail as the embedded default wires it (src/main.ts): the local outbox, no SMTP_URL
  const mail = await mailFromConfig({ SMTP_URL: undefined, OUTBOX_DIR: outboxDir, OUTBOX_PORT: 0, DATA_DIR: outboxDir }, log, app.db.sql);
  outbox = mail.outbox!;
  const services = { sql: app.db.sql, now: () => new Date(), log, pdf: null, mailer: mail.mailer, mailFrom: 'Billing <billing@agency.test>' };
  worker = await startWorker(app.db.url, services, { concurrency: 2, pollInterval: 100 });
  a = await tenant('A');
  b = await tenant('B');
  await settle(a);
  await settle(b);
}, 180_000);
afterAll(async () => {
  await worker?.stop();
  await outbox?.close();
  await app?.close();
  if (outboxDir) await rm(outboxDir, { recursive: true, force: true });
});

const get = async (session: SessionCookie, url: string) => {
  const res = await fetch(app.base + url, { headers: { cookie: session.cookie }, redirect: 'manual' });
  return { status: res.status, text: await res.text() };
};

/**
 * The console's GET pages (src/ops/pages/*), each with the URLs that exercise it for an operator
 * of `own`: its own objects and `other`'s, by id and by search. A page with a
 * parameter this list does not know fails the test, so a new page is covered when it is added.
 */
function consoleUrls(own: Tenant, other: Tenant): string[] {
  const pages = [...jobPages, ...billingPages, ...otherPages, ...operatorPages].filter((p) => p.method === 'GET');
  const byPage: Record<string, string[]> = {
    '/billing/new': [`?periodId=${own.period}`, `?periodId=${other.period}`],
    '/billing/runs/:id': [own.runId, other.runId],
    '/jobs/:id': [own.jobId, other.jobId, own.failedJob, other.failedJob],
    '/jobs/:id/cancel': [own.jobId, other.jobId, own.failedJob, other.failedJob],
    '/jobs/search': [own.runId, 'billing:allocate', 'documents:render', 'deliveries', ...other.strings.map((s) => s.text)].map(
      (q) => `?q=${encodeURIComponent(q)}`,
    ),
    '/jobs/bulk': ['?action=retry', '?action=cancel&task=billing:allocate'],
    '/jobs': ['', '?task=billing:allocate'],
    '/mail': ['', '?status=quarantined'],
  };
  const urls: string[] = [];
  for (const p of pages) {
    const variants = byPage[p.path] ?? [''];
    if (p.path.includes(':')) {
      expect(byPage[p.path], `console page ${p.path}: give it ids in test/tenancy.test.ts`).toBeDefined();
      for (const v of variants) urls.push(`/ops${p.path.replace(/:[A-Za-z]+/, encodeURIComponent(v))}`);
    } else for (const v of variants) urls.push(`/ops${p.path}${v}`);
  }
  return urls;
}

describe('the console as the other workspace', () => {
  it('shows each workspace its own artefacts (so their absence elsewhere means something)', async () => {
    for (const t of [a, b]) {
      const must: [string, string][] = [
        ['/ops/billing', 'client name'],
        [`/ops/billing/runs/${t.runId}`, 'document number'],
        [`/ops/billing/runs/${t.runId}`, 'recipient address'],
        ['/ops/mail', 'intake subject'],
        ['/ops/mail', 'mailbox account'],
        ['/ops/audit', 'billing run id'],
        ['/ops/operators', 'owner email'],
        ['/ops/jobs', 'failed job key'],
        ['/ops/outbox', 'recipient address'],
      ];
      for (const [url, what] of must) {
        const res = await get(t.ownerSession, url);
        expect(res.status, url).toBe(200);
        expect(res.text, `${url} shows the ${what}`).toContain(t.strings.find((s) => s.what === what)!.text);
      }
      // the search by run id finds the run's attempts (the id itself is echoed in the search box)
      const found = await get(t.ownerSession, `/ops/jobs/search?q=${t.runId}`);
      expect(found.text).toContain(`href="/ops/jobs/${t.jobId}"`);
    }
  });

  it.each([
    ['owner', 'ownerSession'],
    ['admin', 'adminSession'],
  ] as const)("every console page, as either workspace's %s, names nothing of the other", { timeout: 120_000 }, async (_role, key) => {
    const failures: string[] = [];
    for (const [own, other] of [
      [b, a],
      [a, b],
    ] as const) {
      for (const url of consoleUrls(own, other)) {
        const res = await get(own[key], url);
        if (res.status >= 500) failures.push(`${url}: ${res.status}`);
        const leaks = foreign(other.strings, res.text, decodeURIComponent(url));
        if (leaks.length) failures.push(`${own === b ? 'B' : 'A'}'s ${key}: ${url} (${res.status}) shows the other workspace's ${leaks.join(', ')}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it("refuses the other workspace's console (?w=) and names nothing of it", async () => {
    const failures: string[] = [];
    for (const url of ['/ops/jobs', '/ops/billing', `/ops/billing/runs/${a.runId}`, '/ops/audit', '/ops/outbox', '/ops/mail', '/ops/operators']) {
      const sep = url.includes('?') ? '&' : '?';
      const res = await get(b.ownerSession, `${url}${sep}w=${a.ws.slug}`);
      if (res.status !== 403) failures.push(`${url}?w=<A>: ${res.status}, expected 403`);
      const leaks = foreign(a.strings, res.text, url + a.ws.slug);
      if (leaks.length) failures.push(`${url}?w=<A>: shows ${leaks.join(', ')}`);
    }
    expect(failures).toEqual([]);
  });
});

/** Workspace `t`'s rows and its failed job as graphile-worker holds it. */
async function stateOf(t: Tenant): Promise<string> {
  const rows = await workspaceState(app.db.sql, t.ws.id);
  const jobs = await app.db.sql`select id, attempts, max_attempts, run_at, last_error, locked_at from graphile_worker.jobs where id = ${t.failedJob}`;
  return JSON.stringify([[...rows], jobs]);
}

describe("the console's actions as the other workspace", () => {
  it("every action, posted by workspace B's owner with workspace A's ids, changes nothing of A and names nothing of it", { timeout: 120_000 }, async () => {
    const sql = app.db.sql;
    const [delivery] = await sql<{ id: string }[]>`select id from document_deliveries where workspace_id = ${a.ws.id} limit 1`;
    const [member] = await sql<{ id: string }[]>`select identity_id as id from memberships where workspace_id = ${a.ws.id} and role = 'member'`;
    // Each POST of the console (src/ops/pages) with the form that names A's object. Running a cron
    // task is the process's, not a workspace's (it may rightly touch A's rows): listed, not sent.
    const forms: Record<string, Record<string, string>[]> = {
      '/billing/runs': [{ periodId: a.period, confirm: 'start' }],
      '/billing/runs/:id/void': [{ id: a.runId, reason: 'tenancy probe', confirmation: 'VOID', password: b.owner.password }],
      '/billing/runs/:id/approve': [{ id: a.runId, confirmation: 'SEND' }],
      '/billing/deliveries/resend': [{ deliveryId: delivery!.id }],
      '/billing/deliveries/mark-sent': [{ deliveryId: delivery!.id }],
      '/jobs/retry': [{ jobId: a.failedJob }],
      '/jobs/bulk': [{ action: 'retry' }, { action: 'cancel' }],
      '/jobs/:id/cancel': [{ id: a.failedJob, confirmation: 'CANCEL' }],
      '/jobs/run-now': [{ jobId: a.failedJob }],
      // B's own pause and resume of a task: A's jobs of it are not held (resumed at once, so B's are not left held)
      '/jobs/tasks/pause': [{ task: 'billing:allocate' }],
      '/jobs/tasks/resume': [{ task: 'billing:allocate' }],
      '/jobs/unlock': [{ workerId: 'tenancy-probe' }],
      '/jobs/cron/run': [],
      '/mail/poll': [{}],
      '/operators': [{ identityId: member!.id, billingOperator: 'true' }],
    };
    const posts = [...jobPages, ...billingPages, ...otherPages, ...operatorPages].filter((p) => p.method === 'POST');
    const failures: string[] = [];
    for (const p of posts) {
      expect(forms[p.path], `console action ${p.path}: give it a form naming workspace A's objects in test/tenancy.test.ts`).toBeDefined();
      for (const form of forms[p.path]!) {
        const { id, ...fields } = form;
        const url = `/ops${p.path.replace(':id', id ?? '')}`;
        const before = await stateOf(a);
        const res = await fetch(app.base + url, {
          method: 'POST',
          redirect: 'manual',
          headers: { cookie: b.ownerSession.cookie, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ _csrf: b.ownerSession.csrfToken, ...fields }),
        });
        const text = `${res.headers.get('location') ?? ''} ${await res.text()}`;
        const sent = `${url} ${JSON.stringify(form)}`;
        if (res.status >= 500) failures.push(`${url} ${JSON.stringify(fields)}: ${res.status}`);
        const leaks = foreign(a.strings, decodeURIComponent(text), sent);
        if (leaks.length) failures.push(`${url} ${JSON.stringify(fields)} (${res.status}) shows ${leaks.join(', ')}`);
        if ((await stateOf(a)) !== before) failures.push(`${url} ${JSON.stringify(fields)} (${res.status}) changed workspace A`);
      }
    }
    const [job] = await sql`select 1 from graphile_worker.jobs where id = ${a.failedJob}`;
    expect(job, "A's failed job is still queued").toBeDefined();
    expect(failures).toEqual([]);
  });
});

describe('REST and MCP reads of job-produced artefacts', () => {
  it("workspace B's owner reads B's documents, runs, deliveries and intake log, and nothing of A's", async () => {
    const failures: string[] = [];
    const W = `/api/w/${b.ws.slug}`;
    const own = [
      `${W}/documents`,
      `${W}/billing/runs`,
      `${W}/billing/runs/${b.runId}`,
      `${W}/billing/runs/${b.runId}/entries`,
      `${W}/mailbox/messages`,
      `${W}/mailbox`,
    ];
    const others = [
      `${W}/billing/runs/${a.runId}`,
      `${W}/billing/runs/${a.runId}/entries`,
      ...a.documentIds.map((id) => `${W}/documents/${id}/download`),
      `${W}/documents?runId=${a.runId}`,
      `/api/w/${a.ws.slug}/documents`,
    ];
    for (const url of own) {
      const res = await get(b.ownerSession, url);
      if (res.status !== 200) failures.push(`${url}: ${res.status}`);
      const leaks = foreign(a.strings, res.text, url);
      if (leaks.length) failures.push(`${url} shows ${leaks.join(', ')}`);
    }
    for (const url of others) {
      const res = await get(b.ownerSession, url);
      if (res.status >= 500 || (res.status < 300 && !url.includes('?'))) failures.push(`${url}: ${res.status}, expected a refusal`);
      const leaks = foreign(a.strings, res.text, decodeURIComponent(url));
      if (leaks.length) failures.push(`${url} (${res.status}) shows ${leaks.join(', ')}`);
    }
    const docs = await get(b.ownerSession, `${W}/documents`);
    for (const id of b.documentIds) expect(docs.text).toContain(id);
    expect(failures).toEqual([]);
  });

  it("MCP resources/list as workspace B's token lists B's documents and none of A's, and reads none of A's", async () => {
    const client = await mcpClient(app, b.ownerToken);
    try {
      const list = JSON.stringify(await client.listResources());
      for (const id of b.documentIds) expect(list).toContain(id);
      expect(foreign(a.strings, list)).toEqual([]);
      for (const id of a.documentIds) {
        const uri = `worktracker://documents/${id}`;
        const text = await client.readResource({ uri }).then(
          (r) => `READ ${JSON.stringify(r)}`,
          (e: unknown) => `ERROR ${String(e)}`,
        );
        expect(text.startsWith('ERROR'), `${uri}: ${text.slice(0, 200)}`).toBe(true);
        expect(foreign(a.strings, text, uri)).toEqual([]);
      }
    } finally {
      await client.close();
    }
  });
});
