import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { createMailer } from '../src/jobs/machinery/mail-from-config.ts';
import { startWorker, type StartedWorker } from '../src/jobs/worker.ts';
import { makeLogger } from '../src/log.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { launchBrowser } from './helpers/browser.ts';
import type { Person } from './helpers/factories.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.ts';
import { makeBillingWorld, type BillingWorld } from './billing-world.ts';

/**
 * The console's "Approve and send" (issue 23) through the real UI: a run held for review shows the
 * form; a wrong confirmation word runs nothing; SEND approves it (audited once, door console) and
 * the emails go out. Real Chromium, a real graphile-worker, a real SMTP server.
 */
let app: TestApp;
let smtp: SmtpSink;
let worker: StartedWorker;
let browser: Browser;
let page: Page;
let w: BillingWorld;

beforeAll(async () => {
  app = await startTestApp();
  smtp = await startSmtpSink();
  const services = {
    sql: app.db.sql,
    now: () => new Date(),
    log: makeLogger('silent'),
    pdf: null,
    mailer: createMailer({ SMTP_URL: smtp.url }),
    mailFrom: 'billing@agency.test',
  };
  worker = await startWorker(app.db.url, services, { concurrency: 2, pollInterval: 100 });
  w = await makeBillingWorld(app, { delivery: 'review' });
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await signIn(w.admin);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await worker?.stop();
  await smtp?.close();
  await app?.close();
});

async function submit(button: ReturnType<Page['getByRole']>) {
  await Promise.all([page.waitForNavigation(), button.click()]);
}

async function signIn(who: Person) {
  await page.goto(`${app.base}/ops`);
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Password').fill(who.password);
  await submit(page.getByRole('button', { name: 'Sign in' }));
}

const status = async (runId: string) => (await app.db.sql<{ status: string }[]>`select status from billing_runs where id = ${runId}`)[0]!.status;

it('approves a run held for review with the typed confirmation, and only then are its timesheets emailed', async () => {
  const started = await app.call('POST', `/api/w/${w.ws.slug}/billing/runs`, { session: w.session, body: { periodId: w.october.id } });
  expect(started.status).toBe(201);
  const runId = started.body.id as string;
  await expect.poll(() => status(runId), { timeout: 60_000 }).toBe('awaiting_approval');

  await page.goto(`${app.base}/ops/billing/runs/${runId}`);
  expect(await page.locator('[data-run-status]').textContent()).toBe('awaiting_approval');
  await page.getByLabel('Type SEND to confirm').fill('send');
  await submit(page.getByRole('button', { name: 'Approve and send' }));
  expect(await page.getByRole('alert').textContent()).toContain('Type SEND');
  expect(await status(runId)).toBe('awaiting_approval');
  expect(smtp.received).toHaveLength(0);

  await page.getByLabel('Type SEND to confirm').fill('SEND');
  await submit(page.getByRole('button', { name: 'Approve and send' }));
  expect(await page.getByRole('status').textContent()).toContain('The run was approved');
  await expect.poll(() => status(runId), { timeout: 60_000 }).toBe('completed');
  expect(smtp.messagesTo('ap@acme.test')).toHaveLength(1);
  expect(smtp.messagesTo('buchhaltung@initech.test')).toHaveLength(2);
  await page.goto(`${app.base}/ops/billing/runs/${runId}`);
  expect(await page.getByRole('button', { name: 'Approve and send' }).count()).toBe(0);
  const audit = await app.db.sql`select door, outcome from ops_audit where workspace_id = ${w.ws.id} and action = 'billing.run.approve'`;
  expect(audit).toEqual([{ door: 'console', outcome: 'succeeded' }]);
}, 120_000);
