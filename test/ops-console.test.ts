import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createMailer } from '../src/jobs/machinery/mail-from-config.ts';
import { startWorker, type StartedWorker } from '../src/jobs/worker.ts';
import { makeLogger } from '../src/log.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { checkBothSizes, launchBrowser } from './helpers/browser.ts';
import { makeClient, makeUser, type Person } from './helpers/factories.ts';
import { answerAt, startSmtpSink, type SmtpSink } from './helpers/smtp.ts';
import { makeBillingWorld, type BillingWorld } from './billing-world.ts';

/**
 * The operators' console through the real UI: Debian's Chromium, a real graphile-worker, a real
 * SMTP server that first refuses (5xx), and the axe-core check of every page at both sizes.
 */
let app: TestApp;
let smtp: SmtpSink;
let worker: StartedWorker;
let browser: Browser;
let w: BillingWorld;
let operator: Person;
let plainMember: Person;
let clientUser: Person;
let context: BrowserContext;
let page: Page;
let runId: string;

beforeAll(async () => {
  app = await startTestApp();
  smtp = await startSmtpSink();
  smtp.program(answerAt('rcpt', { code: 550, text: 'Mailbox unavailable' }));
  const services = {
    sql: app.db.sql,
    now: () => new Date(),
    log: makeLogger('silent'),
    pdf: null,
    mailer: createMailer({ SMTP_URL: smtp.url }),
    mailFrom: 'Billing <billing@agency.test>',
  };
  worker = await startWorker(app.db.url, services, { concurrency: 2, pollInterval: 100 });
  w = await makeBillingWorld(app);
  operator = await makeUser(app.db.sql, w.ws, { role: 'member', name: 'Rita Readonly' });
  await app.db.sql`update memberships set billing_operator = true where identity_id = ${operator.id}`;
  plainMember = await makeUser(app.db.sql, w.ws, { role: 'member', name: 'Nick Noflag' });
  const client = await makeClient(app.db.sql, w.ws);
  clientUser = await makeUser(app.db.sql, w.ws, { role: 'client', clientId: client.id });
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await worker?.stop();
  await smtp?.close();
  await app?.close();
});

/** Clicks a button that submits a form and waits for the page it leads to. */
async function submit(p: Page, button: ReturnType<Page['getByRole']>) {
  await Promise.all([p.waitForNavigation(), button.click()]);
}

async function signIn(p: Page, who: Person, path = '/ops') {
  await p.goto(app.base + path);
  expect(new URL(p.url()).pathname).toBe('/ops/login');
  await p.getByLabel('Email').fill(who.email);
  await p.getByLabel('Password').fill(who.password);
  await submit(p, p.getByRole('button', { name: 'Sign in' }));
}

it('signs in through the login form and goes back where the operator was going', async () => {
  await page.goto(`${app.base}/ops/login?next=/ops/billing`);
  await checkBothSizes(page, 'ops-login');
  await page.getByLabel('Email').fill(w.owner.email);
  await page.getByLabel('Password').fill('wrong password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.getByRole('alert').textContent()).toContain('wrong');
  await page.getByLabel('Email').fill(w.owner.email);
  await page.getByLabel('Password').fill(w.owner.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL('**/ops/billing');
  expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Billing runs');
  expect(await page.getByText('No billing runs yet.').count()).toBe(1);
}, 60_000);

it('starts a run from the dry-run preview, sees a refused delivery fail, resends it once the server is fixed and watches it turn sent', async () => {
  await page.goto(`${app.base}/ops/billing`);
  await checkBothSizes(page, 'ops-billing');
  await page.getByRole('button', { name: 'Preview' }).click();
  await page.waitForURL('**/ops/billing/new?**');
  expect(await page.getByText('Nothing is written until you start it').count()).toBe(1);
  expect(await app.db.sql`select 1 from billing_runs where workspace_id = ${w.ws.id}`).toHaveLength(0);
  await checkBothSizes(page, 'ops-billing-preview');
  await page.getByRole('button', { name: /Start the run: 7 entries/ }).click();
  await page.waitForURL('**/ops/billing/runs/**');
  runId = new URL(page.url()).pathname.split('/').at(-1)!;
  expect(await page.getByRole('status').textContent()).toContain('The run was started.');

  // the SMTP server refuses every recipient (550): deliveries fail; the page refreshes itself
  await page.locator('.state-failed').first().waitFor({ timeout: 60_000 });
  await checkBothSizes(page, 'ops-run-failed-delivery');
  const failed = page.locator('li[data-delivery]', { has: page.locator('.state-failed') }).first();
  const deliveryId = (await failed.getAttribute('data-delivery'))!;
  expect(await failed.textContent()).toContain('Mailbox unavailable');

  smtp.program(null);
  await submit(page, failed.getByRole('button', { name: 'Resend' }));
  expect(await page.getByRole('status').textContent()).toContain('queued to be sent again');
  // no reload: the live refresh shows the delivery turning sent
  await page.locator(`li[data-delivery="${deliveryId}"] .state-sent`).waitFor({ timeout: 30_000 });
  const [row] = await app.db.sql`select state from document_deliveries where id = ${deliveryId}`;
  expect(row!.state).toBe('sent');
  expect(smtp.messages.length).toBeGreaterThanOrEqual(1);
}, 120_000);

it('retries a failed job found by its job key; the retry adds a history row linked to the failed attempt', async () => {
  await app.db.sql`select graphile_worker.add_job('billing:allocate', '{"runId":"not-a-run"}'::json, job_key => 'ops-retry-me', max_attempts => 1)`;
  await expect
    .poll(async () => (await app.db.sql`select 1 from job_history where job_key = 'ops-retry-me' and outcome = 'failed'`).length, { timeout: 30_000 })
    .toBe(1);
  await page.goto(`${app.base}/ops/jobs`);
  await checkBothSizes(page, 'ops-jobs');
  await page.getByLabel('Search jobs').fill('ops-retry-me');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.waitForURL('**/ops/jobs/search?**');
  await checkBothSizes(page, 'ops-jobs-search');
  const link = page.getByRole('table', { name: 'Queued jobs' }).getByRole('link').first();
  const jobId = (await link.textContent())!;
  await link.click();
  await page.waitForURL(`**/ops/jobs/${jobId}`);
  await checkBothSizes(page, 'ops-job');
  await submit(page, page.getByRole('button', { name: 'Retry' }));
  expect(await page.getByRole('status').textContent()).toContain('retry queued');
  await expect.poll(async () => (await app.db.sql`select 1 from job_history where job_id = ${jobId}`).length, { timeout: 30_000 }).toBe(2);
  const attempts = await app.db.sql<{ id: string; follows_id: string | null; attempt: number; outcome: string }[]>`
    select id::text, follows_id::text, attempt, outcome from job_history where job_id = ${jobId} order by id`;
  expect(attempts[0]!.outcome).toBe('failed');
  expect(attempts[1]!.follows_id).toBe(attempts[0]!.id);
  expect(attempts[1]!.attempt).toBe(2);
}, 90_000);

it('counts a bulk retry before running it', async () => {
  await page.goto(`${app.base}/ops/jobs/bulk?action=retry&task=billing:allocate`);
  const n = Number(await page.locator('[data-count]').textContent());
  const [row] = await app.db.sql`select count(*)::int as n from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
    where t.identifier = 'billing:allocate' and j.locked_at is null and j.last_error is not null`;
  expect(n).toBe(row!.n);
  await checkBothSizes(page, 'ops-jobs-bulk');
});

it('voids a run with the typed confirmation, a reason and the password asked in the page', async () => {
  await app.db.sql`update sessions set reauth_at = now() - interval '1 hour'`;
  await page.goto(`${app.base}/ops/billing/runs/${runId}`);
  await page.getByLabel('Reason').fill('Wrong rates for Acme');
  await page.getByLabel('Type VOID to confirm').fill('void it');
  await submit(page, page.getByRole('button', { name: 'Void run' }));
  expect(await page.getByRole('alert').textContent()).toContain('Re-authenticate');
  await page.getByLabel('Reason').fill('Wrong rates for Acme');
  await page.getByLabel('Type VOID to confirm').fill('void it');
  await page.getByLabel(/Your password/).fill(w.owner.password);
  await submit(page, page.getByRole('button', { name: 'Void run' }));
  expect(await page.getByRole('alert').textContent()).toContain('Type VOID');
  await page.getByLabel('Reason').fill('Wrong rates for Acme');
  await page.getByLabel('Type VOID to confirm').fill('VOID');
  await submit(page, page.getByRole('button', { name: 'Void run' }));
  expect(await page.getByRole('status').textContent()).toContain('The run was voided.');
  expect(await page.locator('[data-run-status]').textContent()).toBe('voided');
  const [run] = await app.db.sql`select status, void_reason from billing_runs where id = ${runId}`;
  expect(run).toEqual({ status: 'voided', void_reason: 'Wrong rates for Acme' });
}, 60_000);

it('shows a quarantined mail with its reason', async () => {
  const [mb] = await app.db.sql`
    insert into mailboxes (workspace_id, host, port, secure, username, password_sealed, uid_validity, last_uid, last_error)
    values (${w.ws.id}, 'imap.agency.test', 993, true, 'support@agency.test', '\\x00'::bytea, 42, 7, null) returning id`;
  await app.db.sql`
    insert into intake_messages (workspace_id, mailbox_id, dedupe_key, from_address, subject, received_at, status, reason)
    values (${w.ws.id}, ${mb!.id}, 'k1', 'stranger@else.test', 'Invoice attached <script>', now(), 'quarantined', 'sender_unknown'),
           (${w.ws.id}, ${mb!.id}, 'k2', 'ap@acme.test', 'Question about hours', now() - interval '1 minute', 'imported', null)`;
  await page.goto(`${app.base}/ops/mail`);
  await page.getByLabel('Status').selectOption('quarantined');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.waitForURL('**/ops/mail?status=quarantined');
  const rows = page.getByRole('table', { name: /Intake log/ }).locator('tbody tr');
  expect(await rows.count()).toBe(1);
  expect(await rows.first().textContent()).toContain('sender_unknown');
  expect(await rows.first().textContent()).toContain('Invoice attached <script>');
  expect(await page.getByText('never shown').count()).toBe(1);
  await checkBothSizes(page, 'ops-mail');
}, 60_000);

it('lists every action on the audit page, newest first', async () => {
  await page.goto(`${app.base}/ops/audit`);
  const text = (await page.getByRole('table').textContent())!;
  for (const action of ['billing.run.start', 'delivery.resend', 'job.retry', 'billing.run.void']) expect(text).toContain(action);
  expect(text).toContain('refused'); // the void before re-authentication
  const first = await page.locator('tbody tr').first().textContent();
  expect(first).toContain('billing.run.void');
  await checkBothSizes(page, 'ops-audit');
  await page.goto(`${app.base}/ops/outbox`);
  expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Outbox');
  expect(await page.getByText('What the local SMTP catcher received').count()).toBe(1);
  await checkBothSizes(page, 'ops-outbox');
}, 60_000);

it('gives the read-only operator every page without an action, and refuses a direct post', async () => {
  const ctx2 = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const p = await ctx2.newPage();
  await signIn(p, operator, `/ops/billing/runs/${runId}`);
  await p.waitForURL(`**/ops/billing/runs/${runId}`);
  expect(await p.getByText('billing operator').count()).toBe(1);
  for (const path of [`/ops/billing/runs/${runId}`, '/ops/billing', '/ops/jobs', '/ops/audit', '/ops/mail']) {
    await p.goto(app.base + path);
    expect(await p.locator('main button[type=submit]:not(:has-text("Search")):not(:has-text("Filter"))').count(), path).toBe(0);
  }
  await checkBothSizes(p, 'ops-readonly-jobs');
  const csrf = await p.locator('meta[name=csrf-token]').getAttribute('content');
  const status = await p.evaluate(
    async ([url, token]) =>
      (await fetch(url!, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `_csrf=${token}&jobId=1` })).status,
    [`${app.base}/ops/jobs/retry`, csrf],
  );
  expect(status).toBe(403);
  await ctx2.close();
}, 60_000);

it('gives a member without the flag and a client user a 403 page, and refuses a form without the CSRF token', async () => {
  for (const who of [plainMember, clientUser]) {
    const c = await browser.newContext();
    const p = await c.newPage();
    await signIn(p, who);
    const res = await p.goto(`${app.base}/ops/jobs`);
    expect(res!.status()).toBe(403);
    expect(await p.getByRole('heading', { level: 1 }).textContent()).toBe('Not for you');
    if (who === plainMember) await checkBothSizes(p, 'ops-403');
    await c.close();
  }
  const status = await page.evaluate(
    async (url) => (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'jobId=1' })).status,
    `${app.base}/ops/jobs/retry`,
  );
  expect(status).toBe(403);
  const [refusedRetries] = await app.db.sql`select count(*)::int as n from ops_audit where action = 'job.retry' and outcome = 'succeeded'`;
  expect(refusedRetries!.n).toBe(1);
}, 60_000);
