import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { createMailer } from '../src/jobs/machinery/mail-from-config.ts';
import { outgoingWorkspace } from '../src/core/mail/outgoing.ts';
import { startOutbox, type Outbox } from '../src/jobs/machinery/outbox-server.ts';
import { startWorker, type StartedWorker } from '../src/jobs/worker.ts';
import { makeLogger } from '../src/log.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { checkBothSizes, launchBrowser } from './helpers/browser.ts';
import { makeUser, type Person } from './helpers/factories.ts';
import { makeBillingWorld, type BillingWorld } from './billing-world.ts';

/**
 * The console's actions not covered by ops-console.test.ts, through the real UI: an admin makes a
 * member a billing operator, cancel, a bulk retry, force-unlock refused for a live worker, "run
 * now", "mark as sent", and the outbox page over the real local SMTP catcher. Real Chromium, a
 * real graphile-worker, real SMTP (src/jobs/machinery/outbox-server.ts) writing .eml files.
 */
let app: TestApp;
let outbox: Outbox;
let outboxDir: string;
let worker: StartedWorker;
let browser: Browser;
let w: BillingWorld;
let newcomer: Person;
let page: Page;

beforeAll(async () => {
  outboxDir = await mkdtemp(path.join(os.tmpdir(), 'wt-ops-outbox-'));
  app = await startTestApp({ env: { OUTBOX_DIR: outboxDir } });
  outbox = await startOutbox({ dir: outboxDir, workspaceOf: (id) => outgoingWorkspace(app.db.sql, id) });
  const services = {
    sql: app.db.sql,
    now: () => new Date(),
    log: makeLogger('silent'),
    pdf: null,
    mailer: createMailer({ SMTP_URL: outbox.url }),
    mailFrom: 'Billing <billing@agency.test>',
  };
  // a stale lock is swept after 10 minutes here: the test's own "dead worker" lock stays put
  worker = await startWorker(app.db.url, services, { concurrency: 2, pollInterval: 100, liveness: { intervalMs: 5_000, staleMs: 600_000 } });
  w = await makeBillingWorld(app);
  newcomer = await makeUser(app.db.sql, w.ws, { role: 'member', name: 'Nora Newcomer' });
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await signIn(page, w.admin);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await worker?.stop();
  await outbox?.close();
  await app?.close();
  if (outboxDir) await rm(outboxDir, { recursive: true, force: true });
});

async function submit(p: Page, button: ReturnType<Page['getByRole']>) {
  await Promise.all([p.waitForNavigation(), button.click()]);
}

async function signIn(p: Page, who: Person) {
  await p.goto(`${app.base}/ops`);
  await p.getByLabel('Email').fill(who.email);
  await p.getByLabel('Password').fill(who.password);
  await submit(p, p.getByRole('button', { name: 'Sign in' }));
}

/** A job of `billing:allocate` that fails on its one attempt (no such run), and its id once it has. */
async function failingJob(key: string): Promise<string> {
  await app.db.sql`select graphile_worker.add_job('billing:allocate', '{"runId":"not-a-run"}'::json, job_key => ${key}, max_attempts => 1)`;
  await expect
    .poll(async () => (await app.db.sql`select 1 from job_history where job_key = ${key} and outcome = 'failed'`).length, { timeout: 30_000 })
    .toBe(1);
  const [j] = await app.db.sql<{ id: string }[]>`select id::text from graphile_worker._private_jobs where key = ${key}`;
  return j!.id;
}

it('an admin makes a member a billing operator: refused before, every page read-only after', async () => {
  const other = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await signIn(other, newcomer);
  expect((await other.goto(`${app.base}/ops/jobs`))!.status()).toBe(403);

  await page.goto(`${app.base}/ops/operators`);
  await checkBothSizes(page, 'ops-operators');
  const row = page.locator(`tr[data-identity="${newcomer.id}"]`);
  expect(await row.locator('[data-access]').textContent()).toBe('none');
  // an owner's or admin's row has no toggle: they act anyway
  expect(await page.locator(`tr[data-identity="${w.owner.id}"] button`).count()).toBe(0);
  await submit(page, row.getByRole('button', { name: 'Make Nora Newcomer a billing operator' }));
  expect(await page.getByRole('status').textContent()).toContain('Nora Newcomer is now a billing operator');
  expect(await row.locator('[data-access]').textContent()).toBe('reads (billing operator)');
  const [m] = await app.db.sql`select billing_operator from memberships where identity_id = ${newcomer.id}`;
  expect(m!.billing_operator).toBe(true);

  for (const p of ['/ops/jobs', '/ops/billing', '/ops/operators', '/ops/audit']) {
    const res = await other.goto(app.base + p);
    expect(res!.status(), p).toBe(200);
    expect(await other.locator('main button[type=submit]:not(:has-text("Search")):not(:has-text("Filter"))').count(), p).toBe(0);
  }
  expect(await other.getByText('(billing operator)').count()).toBe(1);
  // a direct post by the read-only operator is refused, and audited as refused
  const csrf = await other.locator('meta[name=csrf-token]').getAttribute('content');
  const status = await other.evaluate(
    async ([url, token, id]) =>
      (
        await fetch(url!, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `_csrf=${token}&identityId=${id}&billingOperator=false`,
        })
      ).status,
    [`${app.base}/ops/operators`, csrf, newcomer.id],
  );
  expect(status).toBe(403);
  const [refused] = await app.db.sql`select actor_name, outcome from ops_audit where action = 'operator.withdraw' order by id desc limit 1`;
  expect(refused).toEqual({ actor_name: 'Nora Newcomer', outcome: 'refused' });

  // withdrawn: the 403 page again
  await page.goto(`${app.base}/ops/operators`);
  await submit(page, row.getByRole('button', { name: 'Withdraw billing operator from Nora Newcomer' }));
  expect(await row.locator('[data-access]').textContent()).toBe('none');
  expect((await other.goto(`${app.base}/ops/jobs`))!.status()).toBe(403);
  await other.context().close();
}, 90_000);

it('cancels a failed job after the typed CANCEL: it leaves the queue, its history stays', async () => {
  const jobId = await failingJob('ops-cancel-me');
  await page.goto(`${app.base}/ops/jobs/${jobId}`);
  await Promise.all([page.waitForURL(`**/ops/jobs/${jobId}/cancel`), page.getByRole('link', { name: 'Cancel' }).click()]);
  await page.getByLabel('Type CANCEL to confirm').fill('CANCEL');
  await submit(page, page.getByRole('button', { name: `Cancel job ${jobId}` }));
  expect(await page.getByRole('status').textContent()).toContain(`Job ${jobId}: cancelled`);
  expect(await app.db.sql`select 1 from graphile_worker._private_jobs where id = ${jobId}`).toHaveLength(0);
  expect(await app.db.sql`select outcome from job_history where job_id = ${jobId}`).toEqual([{ outcome: 'failed' }]);
  await page.goto(`${app.base}/ops/jobs/${jobId}`);
  expect(await page.getByText('The job is no longer queued').count()).toBe(1);
}, 60_000);

it('a bulk retry shows its count first, then runs each job of the filter again', async () => {
  const ids = [await failingJob('ops-bulk-1'), await failingJob('ops-bulk-2'), await failingJob('ops-bulk-3')];
  await page.goto(`${app.base}/ops/jobs?task=billing:allocate`);
  await page.getByRole('link', { name: /Retry all 3 matching/ }).click();
  await page.waitForURL('**/ops/jobs/bulk?**');
  expect(await page.locator('[data-count]').textContent()).toBe('3');
  // nothing touched yet
  expect(await app.db.sql`select 1 from graphile_worker._private_jobs where id = any(${ids}::bigint[]) and max_attempts = 1`).toHaveLength(3);
  await submit(page, page.getByRole('button', { name: 'Retry 3 jobs' }));
  expect(await page.getByRole('status').textContent()).toContain('Retried 3 job(s).');
  // each ran again: a second attempt row following the first, failing the same way
  await expect
    .poll(async () => (await app.db.sql`select 1 from job_history where job_id = any(${ids}::bigint[]) and attempt = 2 and outcome = 'failed'`).length, {
      timeout: 30_000,
    })
    .toBe(3);
  const linked = await app.db.sql`
    select 1 from job_history h join job_history prev on prev.id = h.follows_id
    where h.job_id = any(${ids}::bigint[]) and h.attempt = 2 and prev.attempt = 1 and prev.outcome = 'failed'`;
  expect(linked).toHaveLength(3);
}, 120_000);

it('force-unlock is refused while the worker beats, and frees the jobs of a dead one', async () => {
  const [job] = await app.db.sql<
    { id: string }[]
  >`select id::text from graphile_worker.add_job('sessions:cleanup', '{}'::json, run_at => now() + interval '1 hour')`;
  await app.db.sql`update graphile_worker._private_jobs set locked_by = 'ops-test-worker', locked_at = now(), run_at = now() where id = ${job!.id}`;
  await page.goto(`${app.base}/ops/jobs`);
  const running = page.getByRole('table', { name: 'Running jobs' });
  expect(await running.textContent()).toContain('not beating');
  // the worker comes back between the page and the click
  await app.db.sql`insert into worker_heartbeats (process_id, worker_ids) values ('ops-test-process', '{ops-test-worker}')`;
  await submit(page, running.getByRole('button', { name: 'Force unlock' }));
  expect(await page.getByRole('alert').textContent()).toContain('That worker is alive');
  const [still] = await app.db.sql`select locked_by from graphile_worker._private_jobs where id = ${job!.id}`;
  expect(still!.locked_by).toBe('ops-test-worker');

  await app.db.sql`update worker_heartbeats set beat_at = now() - interval '1 hour' where process_id = 'ops-test-process'`;
  await page.goto(`${app.base}/ops/jobs`);
  await submit(page, page.getByRole('table', { name: 'Running jobs' }).getByRole('button', { name: 'Force unlock' }));
  expect(await page.getByRole('status').textContent()).toContain('unlocked');
  // freed: the real worker takes it and runs it
  await expect
    .poll(async () => (await app.db.sql`select outcome from job_history where job_id = ${job!.id}`)[0]?.outcome, { timeout: 30_000 })
    .toBe('succeeded');
}, 60_000);

it('"run now" queues a crontab task at once, and the worker runs it', async () => {
  const before = await app.db.sql`select id from job_history where task = 'history:cleanup'`;
  await page.goto(`${app.base}/ops/jobs`);
  const cron = page.getByRole('table', { name: 'Recurring tasks' });
  const row = cron.locator('tr', { hasText: 'history:cleanup' });
  await submit(page, row.getByRole('button', { name: 'Run now' }));
  expect(await page.getByRole('status').textContent()).toContain('history:cleanup queued.');
  await expect
    .poll(async () => (await app.db.sql`select 1 from job_history where task = 'history:cleanup' and outcome = 'succeeded'`).length, { timeout: 30_000 })
    .toBe(before.length + 1);
}, 60_000);

it('sends a run to the local outbox, shows the messages, and marks a delivery of unknown outcome as sent', async () => {
  await page.goto(`${app.base}/ops/billing`);
  await page.getByRole('button', { name: 'Preview' }).click();
  await page.waitForURL('**/ops/billing/new?**');
  await page.getByRole('button', { name: /Start the run/ }).click();
  await page.waitForURL('**/ops/billing/runs/**');
  const runId = new URL(page.url()).pathname.split('/').at(-1)!;
  const deliveries = () =>
    app.db.sql<{ id: string; state: string; email: string }[]>`
      select dd.id, dd.state, dd.email from document_deliveries dd join timesheets s on s.id = dd.timesheet_id where s.run_id = ${runId} order by dd.id`;
  await expect.poll(async () => (await deliveries()).length > 0 && (await deliveries()).every((d) => d.state === 'sent'), { timeout: 60_000 }).toBe(true);
  const sent = await deliveries();

  // the outbox page lists what the catcher stored for this workspace, one row per .eml file
  const files = (await readdir(path.join(outboxDir, w.ws.id))).filter((f) => f.endsWith('.eml'));
  expect(files.length).toBe(sent.length);
  await page.goto(`${app.base}/ops/outbox`);
  const rows = page.getByRole('table', { name: 'Messages, newest first' }).locator('tbody tr');
  expect(await rows.count()).toBe(files.length);
  const text = (await page.getByRole('table', { name: 'Messages, newest first' }).textContent())!;
  for (const d of sent) expect(text).toContain(d.email);
  expect(text).toContain('billing@agency.test');
  await checkBothSizes(page, 'ops-outbox-messages');

  // a send that crashed mid-way leaves `unknown`: the operator decides it went out
  const target = sent[0]!;
  await app.db.sql`update document_deliveries set state = 'unknown', detail = 'worker stopped while sending' where id = ${target.id}`;
  await page.goto(`${app.base}/ops/billing/runs/${runId}`);
  const item = page.locator(`li[data-delivery="${target.id}"]`);
  expect(await item.locator('.state-unknown').count()).toBe(1);
  await submit(page, item.getByRole('button', { name: 'Mark as sent' }));
  expect(await page.getByRole('status').textContent()).toContain('marked as sent');
  const [after] = await app.db.sql`select state, detail from document_deliveries where id = ${target.id}`;
  const [admin] = await app.db.sql`select name from identities where id = ${w.admin.id}`;
  expect(after).toEqual({ state: 'sent', detail: `Marked as sent by ${admin!.name}` });
  expect((await readdir(path.join(outboxDir, w.ws.id))).filter((f) => f.endsWith('.eml')).length).toBe(files.length); // marking sends nothing
}, 120_000);

it('lists each of those actions on the audit page with its outcome', async () => {
  await page.goto(`${app.base}/ops/audit`);
  const rows = await page.locator('tbody tr').allTextContents();
  const has = (action: string, outcome: string) => rows.some((r) => r.includes(action) && r.includes(outcome));
  expect(has('operator.grant', 'succeeded')).toBe(true);
  expect(has('operator.withdraw', 'refused')).toBe(true);
  expect(has('operator.withdraw', 'succeeded')).toBe(true);
  expect(has('job.cancel', 'succeeded')).toBe(true);
  expect(has('jobs.bulk_retry', 'succeeded')).toBe(true);
  expect(rows.some((r) => r.includes('jobs.bulk_retry') && r.includes('3 job(s)'))).toBe(true);
  expect(has('worker.force_unlock', 'failed')).toBe(true);
  expect(rows.some((r) => r.includes('worker.force_unlock') && r.includes('That worker is alive'))).toBe(true);
  expect(has('worker.force_unlock', 'succeeded')).toBe(true);
  expect(has('cron.run_now', 'succeeded')).toBe(true);
  expect(has('billing.run.start', 'succeeded')).toBe(true);
  expect(has('delivery.mark_sent', 'succeeded')).toBe(true);
  expect(rows[0]).toContain('delivery.mark_sent');
}, 60_000);
