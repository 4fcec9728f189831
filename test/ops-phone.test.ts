import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { createMailer } from '../src/jobs/machinery/mail-from-config.ts';
import { startWorker, type StartedWorker } from '../src/jobs/worker.ts';
import { makeLogger } from '../src/log.ts';
import { consoleRoutes } from '../src/ops/pages/index.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { DESKTOP, injectAxe, launchBrowser, PHONE } from './helpers/browser.ts';
import { makePeriod, makeTimeEntry } from './helpers/factories.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.ts';
import { makeBillingWorld, type BillingWorld } from './billing-world.ts';

/**
 * Issue 26: every console page is usable on a phone. Each page, filled with what an agency has (a
 * billed run with its documents and deliveries, failed and scheduled jobs, audit rows, a mailbox's
 * intake log, an outbox message, every Setup page with data, the signed-out pages), is opened at
 * 390×844 and 1280×800 and must pass axe (no serious or critical violation), not scroll sideways,
 * keep every table inside its own width (rows stack on a phone instead of scrolling), and never
 * break a word inside a table cell: each word of a cell's text lies on one line, unless it is wider
 * than the page's column and cannot fit anywhere. Screenshots go to a temporary folder (printed),
 * for people to look at; nothing is compared by pixels.
 */
let app: TestApp;
let smtp: SmtpSink;
let worker: StartedWorker;
let browser: Browser;
let page: Page;
let w: BillingWorld;
let runId: string;
let failedJobId: string;
let scheduledJobId: string;
let september: { id: string };
let joinSecret: string;
const SHOTS = mkdtempSync(join(tmpdir(), 'ops-phone-'));
const OUTBOX = mkdtempSync(join(tmpdir(), 'ops-phone-outbox-'));
const PUBLIC_URL = 'https://wt.example.test';
const LONG_EMAIL = 'accounts-payable@initech-holdings.example';

/** Waits for the worker to have done something (a bound only to stop a hang). */
async function until(done: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (await done()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`waited two minutes for ${what}`);
}

beforeAll(async () => {
  app = await startTestApp({ env: { OUTBOX_DIR: OUTBOX } });
  smtp = await startSmtpSink();
  const services = {
    sql: app.db.sql,
    now: () => new Date(),
    log: makeLogger('silent'),
    pdf: null,
    mailer: createMailer({ SMTP_URL: smtp.url }),
    mailFrom: 'Billing <billing@agency.test>',
    publicUrl: PUBLIC_URL,
  };
  worker = await startWorker(app.db.url, services, { concurrency: 2, pollInterval: 100 });
  w = await makeBillingWorld(app);
  const sql = app.db.sql;
  const api = (path: string) => `/api/w/${w.ws.slug}${path}`;
  const post = async (path: string, body: unknown) => {
    const res = await app.call('POST', api(path), { session: w.session, body });
    expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
    return res.body as { id: string };
  };
  await sql`insert into client_billing_recipients (client_id, email, name) values (${w.initech.id}, ${LONG_EMAIL}, 'Initech Holdings accounts payable')`;
  await post('/categories', { name: 'Senior consultant' });
  // a closed period not billed yet, for the run's preview
  september = await makePeriod(sql, w.ws, { start: '2026-09-01', end: '2026-09-30', closed: true });
  await makeTimeEntry(sql, w.ws, { ticketId: w.tickets.paid.id, userId: w.member.id, spentOn: '2026-09-15', minutes: 75, billable: true });

  // a run with its documents, approved where it waits for review, whose deliveries reach a final state
  runId = (await post('/billing/runs', { periodId: w.october.id })).id;
  const status = async () => (await sql`select status from billing_runs where id = ${runId}`)[0]!.status as string;
  await until(async () => !['allocating', 'rendering'].includes(await status()), 'the run’s documents');
  if ((await status()) === 'awaiting_approval') await post(`/billing/runs/${runId}/approve`, {});
  await until(
    async () =>
      (
        await sql`select 1 from document_deliveries d join timesheets s on s.id = d.timesheet_id where s.run_id = ${runId} and d.state in ('sent', 'failed', 'unknown')`
      ).length >= 3,
    'the run’s deliveries',
  );

  // a failed job, and a scheduled one with a long key
  await sql`select graphile_worker.add_job('billing:allocate', '{"runId":"not-a-run"}'::json, job_key => 'ops-phone-failed', max_attempts => 1)`;
  await sql`select graphile_worker.add_job('billing:allocate', '{"runId":"later"}'::json, job_key => 'billing-allocate-october-2026-initech', run_at => now() + interval '1 day')`;
  await until(async () => (await sql`select 1 from job_history where job_key = 'ops-phone-failed' and outcome = 'failed'`).length === 1, 'the failed job');
  const [failed] = await sql`select j.id::text from graphile_worker._private_jobs j where j.key = 'ops-phone-failed'`;
  failedJobId = failed!.id as string;
  const [scheduled] = await sql`select j.id::text from graphile_worker._private_jobs j where j.key = 'billing-allocate-october-2026-initech'`;
  scheduledJobId = scheduled!.id as string;

  // a mailbox and its intake log
  const [mb] = await sql`
    insert into mailboxes (workspace_id, host, port, secure, username, password_sealed, uid_validity, last_uid, last_error)
    values (${w.ws.id}, 'imap.agency-mail-hosting.example', 993, true, 'support@agency.test', '\\x00'::bytea, 42, 7, null) returning id`;
  await sql`
    insert into intake_messages (workspace_id, mailbox_id, dedupe_key, from_address, subject, received_at, status, reason)
    values (${w.ws.id}, ${mb!.id}, 'k1', ${LONG_EMAIL}, 'Invoice INV-2026-10-0042 attached: please confirm the hours', now(), 'quarantined', 'sender_unknown'),
           (${w.ws.id}, ${mb!.id}, 'k2', 'ap@acme.test', 'Question about hours', now() - interval '1 minute', 'imported', null)`;

  // a message in the workspace's outbox folder, as the embedded SMTP catcher stores it
  mkdirSync(join(OUTBOX, w.ws.id), { recursive: true });
  writeFileSync(
    join(OUTBOX, w.ws.id, '2026-11-02T09-00-00-000Z-a1.eml'),
    [
      'From: Billing <billing@agency.test>',
      `To: ${LONG_EMAIL}, ap@acme.test`,
      'Subject: Timesheet ACME-2026-0001 for October 2026',
      'Date: Mon, 02 Nov 2026 09:00:00 +0000',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b"',
      '',
      '--b',
      'Content-Type: text/plain',
      '',
      'Your timesheet is attached.',
      '--b',
      'Content-Type: text/html; name="timesheet-ACME-2026-0001.html"',
      'Content-Disposition: attachment; filename="timesheet-ACME-2026-0001.html"',
      '',
      '<p>hours</p>',
      '--b--',
      '',
    ].join('\r\n'),
  );

  // an invitation whose link opens the join page
  await post('/invitations', { email: 'new.consultant@agency.test', name: 'Nora Newcomer', role: 'member' });
  const joinLink = () => new RegExp(`${PUBLIC_URL}/ops/join/([A-Za-z0-9_-]+)`).exec(smtp.messagesTo('new.consultant@agency.test')[0]?.text ?? '')?.[1];
  await until(() => Promise.resolve(joinLink() !== undefined), 'the invitation email');
  joinSecret = joinLink()!;

  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: DESKTOP })).newPage();
}, 300_000);
afterAll(async () => {
  await browser?.close();
  await worker?.stop();
  await smtp?.close();
  await app?.close();
});

/** The URL of each page of the console in this world; a page missing here fails the registry test below. */
const PAGES: Record<string, () => string> = {
  '/jobs': () => '/ops/jobs',
  '/jobs/search': () => '/ops/jobs/search?q=billing',
  '/jobs/bulk': () => '/ops/jobs/bulk?action=retry&task=billing:allocate',
  '/jobs/:id': () => `/ops/jobs/${failedJobId}`,
  '/jobs/:id/cancel': () => `/ops/jobs/${scheduledJobId}/cancel`,
  '/billing': () => '/ops/billing',
  '/billing/new': () => `/ops/billing/new?periodId=${september.id}`,
  '/billing/runs/:id': () => `/ops/billing/runs/${runId}`,
  '/audit': () => '/ops/audit',
  '/outbox': () => '/ops/outbox',
  '/mail': () => '/ops/mail',
  '/operators': () => '/ops/operators',
  '/setup': () => '/ops/setup',
  '/setup/people': () => '/ops/setup/people',
  '/setup/people/:identityId': () => `/ops/setup/people/${w.member.id}`,
  '/setup/clients': () => '/ops/setup/clients',
  '/setup/clients/:id': () => `/ops/setup/clients/${w.initech.id}`,
  '/setup/projects': () => '/ops/setup/projects',
  '/setup/projects/:id': () => `/ops/setup/projects/${projectOf('API')}`,
  '/setup/categories': () => '/ops/setup/categories',
  '/setup/rates': () => '/ops/setup/rates',
  '/setup/periods': () => '/ops/setup/periods',
  '/setup/workflow': () => '/ops/setup/workflow',
  '/setup/settings': () => '/ops/setup/settings',
};
const projectIds: Record<string, string> = {};
const projectOf = (key: string) => projectIds[key]!;

/**
 * What the page shows wrong at the current size: how far it scrolls sideways, the tables wider than
 * their box, and every word of a table cell laid over more than one line (a Range around the word
 * has one client rect per line it is on). A word may break only where it cannot fit: on a wide
 * screen, a word wider than the page's column; in a stacked row (a phone), a word wider than the
 * block it is written in. In a sentence, a line may also end at punctuation inside a word (after
 * a hyphen, between brackets), as line breaking allows, but never between two letters or digits.
 */
function measure(): string[] {
  const problems: string[] = [];
  const scroller = document.scrollingElement ?? document.documentElement;
  if (scroller.scrollWidth > innerWidth) problems.push(`the page scrolls sideways by ${scroller.scrollWidth - innerWidth}px`);
  const contentWidth = (e: Element) => {
    const style = getComputedStyle(e);
    return e.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  };
  const column = contentWidth(document.querySelector('main')!);
  for (const t of document.querySelectorAll('table')) {
    const box = t.parentElement!;
    if (box.scrollWidth > box.clientWidth || t.getBoundingClientRect().right > innerWidth)
      problems.push(`table "${t.caption?.textContent?.trim()}" is wider than its box`);
  }
  /** Whether each line the word goes on to starts after punctuation ("ACME-" / "2026", "[a-f]" / "{8}"), never between two letters or digits. */
  const alphanumeric = (c: string | undefined) => /[\p{L}\p{N}]/u.test(c ?? '');
  const punctuationBreaksOnly = (n: Text, start: number, word: string) => {
    const top = (i: number) => {
      const r = document.createRange();
      r.setStart(n, start + i);
      r.setEnd(n, start + i + 1);
      return r.getClientRects()[0]?.top ?? 0;
    };
    for (let i = 1; i < word.length; i++) if (top(i) !== top(i - 1) && alphanumeric(word[i - 1]) && alphanumeric(word[i])) return false;
    return true;
  };
  for (const cell of document.querySelectorAll('th, td')) {
    const stacked = getComputedStyle(cell.closest('table')!).display === 'block';
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode() as Text | null; n; n = walker.nextNode() as Text | null) {
      if (n.parentElement!.closest('select, textarea')) continue;
      let block: Element = n.parentElement!;
      while (getComputedStyle(block).display.startsWith('inline') && block !== cell) block = block.parentElement!;
      const room = stacked ? contentWidth(block) : column;
      // in a sentence (a subject, an error), a line may end at a word's punctuation as line breaking allows; an identifier shown alone may not
      const prose = (n.data.match(/\S+/g) ?? []).length > 1;
      for (const m of n.data.matchAll(/\S+/g)) {
        const range = document.createRange();
        range.setStart(n, m.index);
        range.setEnd(n, m.index + m[0].length);
        const lines = [...range.getClientRects()].filter((r) => r.width > 0);
        const width = lines.reduce((sum, r) => sum + r.width, 0);
        if (lines.length > 1 && width <= room && !(prose && punctuationBreaksOnly(n, m.index, m[0]))) {
          const label = (cell as HTMLElement).dataset.label ?? cell.textContent?.trim().slice(0, 20);
          problems.push(`${label}: "${m[0]}" (${Math.round(width)}px, room ${Math.round(room)}px) broken over ${lines.length} lines`);
        }
      }
    }
  }
  return problems;
}

const problems: string[] = [];

/** axe (serious and critical), the measurements above and a screenshot, at the phone's size and the desktop's; what is wrong is collected. */
async function checkSizes(p: Page, name: string): Promise<void> {
  for (const [label, size] of [
    ['phone', PHONE],
    ['desktop', DESKTOP],
  ] as const) {
    await p.setViewportSize(size);
    await injectAxe(p);
    const violations = await p.evaluate(async () => {
      const axe = (
        globalThis as unknown as { axe: { run: (d: Document) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }
      ).axe;
      const r = await axe.run(document);
      return r.violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `axe ${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    });
    const shot = join(SHOTS, `${name}-${label}.jpeg`);
    await p.screenshot({ path: shot, fullPage: true, type: 'jpeg', quality: 80 });
    for (const problem of [...violations, ...(await p.evaluate(measure))]) problems.push(`${name} (${label}, ${shot}): ${problem}`);
  }
  await p.setViewportSize(DESKTOP);
}

/** Every page the console serves (a GET route): each is opened below. */
const pagePaths = consoleRoutes.filter((r) => r.method === 'GET').map((r) => r.path);

it('knows how to open every page of the console, so a new page is checked here too', () => {
  expect(pagePaths.filter((path) => !(path in PAGES))).toEqual([]);
});

it('shows the signed-out pages on a phone: sign in, join, a new password, a link that no longer works', async () => {
  console.log(`screenshots: ${SHOTS}`);
  for (const [name, path] of [
    ['login', '/ops/login?next=/ops/billing'],
    ['join', `/ops/join/${joinSecret}`],
    ['reset', '/ops/reset/some-reset-secret'],
    ['link-gone', '/ops/join/no-such-invitation'],
  ] as const) {
    await page.goto(app.base + path);
    expect(await page.getByRole('heading', { level: 1 }).count(), name).toBe(1);
    await checkSizes(page, name);
  }
  expect(problems.splice(0)).toEqual([]);
}, 120_000);

it('shows every signed-in page on a phone without sideways scrolling or a word broken in a table cell', async () => {
  for (const p of await app.db.sql<{ key: string; id: string }[]>`select key, id from projects where workspace_id = ${w.ws.id}`) projectIds[p.key] = p.id;
  await page.goto(`${app.base}/ops/login`);
  await page.getByLabel('Email').fill(w.owner.email);
  await page.getByLabel('Password').fill(w.owner.password);
  await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign in' }).click()]);
  // home: the console opens on Jobs
  expect(new URL(page.url()).pathname).toBe('/ops/jobs');
  for (const path of pagePaths.filter((p) => p in PAGES)) {
    const url = PAGES[path]!();
    const res = await page.goto(app.base + url);
    if (res?.status() !== 200) problems.push(`${url} answers ${res?.status()}`);
    await checkSizes(page, path.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, ''));
  }
  // a page that is not there, with the signed-in shell
  await page.goto(`${app.base}/ops/no-such-page`);
  await checkSizes(page, 'not-found');
  expect(problems.splice(0)).toEqual([]);

  // the run's documents table was measured with what the operator came for: documents with their deliveries, each cell named on a phone
  await page.goto(`${app.base}${PAGES['/billing/runs/:id']!()}`);
  await page.setViewportSize(PHONE);
  const cells = page.getByRole('table', { name: 'Documents and their deliveries' }).locator('tbody tr td:nth-child(9)');
  expect(await cells.count()).toBeGreaterThanOrEqual(3);
  expect(await cells.first().evaluate((td) => getComputedStyle(td, '::before').content)).toBe('"Deliveries"');
  await page.setViewportSize(DESKTOP);
}, 240_000);
