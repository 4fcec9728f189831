import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { allocateJob } from '../src/core/jobs/catalog.ts';
import { enqueue } from '../src/core/jobs/enqueue.ts';
import { knownTasks } from '../src/core/ops/job-controls.ts';
import { createMailer } from '../src/jobs/machinery/mail-from-config.ts';
import { startWorker, type StartedWorker } from '../src/jobs/worker.ts';
import { makeLogger } from '../src/log.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { checkBothSizes, launchBrowser } from './helpers/browser.ts';
import { makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

/**
 * The console's job controls (issue 26) through the real UI in Debian's Chromium: the warning for a
 * job no worker handles, cancel (with the typed CANCEL) and "run now" of waiting and scheduled
 * jobs, pause and resume of a task with a real graphile-worker, and the page by keyboard alone.
 */
let app: TestApp;
let browser: Browser;
let page: Page;
let ws: Workspace;
let admin: Person;
let worker: StartedWorker | null = null;

beforeAll(async () => {
  app = await startTestApp();
  ws = await makeWorkspace(app.db.sql);
  admin = await makeUser(app.db.sql, ws, { role: 'admin', name: 'Ada Admin' });
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await page.goto(`${app.base}/ops`);
  await page.getByLabel('Email').fill(admin.email);
  await page.getByLabel('Password').fill(admin.password);
  await submit(page.getByRole('button', { name: 'Sign in' }));
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await worker?.stop();
  await app?.close();
});

async function submit(button: ReturnType<Page['getByRole']>) {
  await Promise.all([page.waitForNavigation(), button.click()]);
}

/** An allocation job of the workspace (its run does not exist: an attempt fails, which is all this needs). */
async function allocate(runAt?: Date): Promise<string> {
  const payload = { workspaceId: ws.id, runId: randomUUID() };
  await enqueue(app.db.sql, allocateJob, payload, runAt ? { runAt } : {});
  const [job] = await app.db.sql<{ id: string }[]>`select id::text from graphile_worker.jobs where key = ${allocateJob.key(payload)}`;
  return job!.id;
}
const inAnHour = () => new Date(Date.now() + 3_600_000);
const jobRow = async (id: string) =>
  (
    await app.db.sql<{ priority: number; due: boolean; attempts: number }[]>`
      select priority, run_at <= now() as due, attempts from graphile_worker.jobs where id = ${id}::bigint`
  )[0];
const attempts = async (id: string) => (await app.db.sql`select 1 from job_history where job_id = ${id}::bigint`).length;
const queuedTable = () => page.getByRole('table', { name: 'Waiting and scheduled jobs' });
const rowOf = (id: string) => queuedTable().locator(`tr[data-job="${id}"]`);

/** Cancels a job through its confirmation page: a mistyped word first (nothing happens), then CANCEL. */
async function cancelThroughConfirmation(id: string) {
  await page.goto(`${app.base}/ops/jobs`);
  await Promise.all([
    page.waitForURL(`**/ops/jobs/${id}/cancel`),
    rowOf(id)
      .getByRole('link', { name: new RegExp(`^Cancel job ${id} `) })
      .click(),
  ]);
  await page.getByLabel('Type CANCEL to confirm').fill('cancel');
  await submit(page.getByRole('button', { name: `Cancel job ${id}` }));
  expect(await page.getByRole('alert').textContent()).toContain('Type CANCEL to confirm.');
  expect(await jobRow(id)).toBeDefined();
  await page.getByLabel('Type CANCEL to confirm').fill('CANCEL');
  await submit(page.getByRole('button', { name: `Cancel job ${id}` }));
  expect(await page.getByRole('status').textContent()).toContain(`Job ${id}: cancelled.`);
  expect(await jobRow(id)).toBeUndefined();
}

it('warns of a job no worker handles, naming the tasks the workers know, and cancels that waiting job after the typed CANCEL', async () => {
  const [orphan] = await app.db.sql<{ id: string }[]>`select (graphile_worker.add_job('reports:nightly', '{}'::json)).id::text as id`;
  await page.goto(`${app.base}/ops/jobs`);
  const warning = page.locator('[data-unknown-tasks]');
  const text = (await warning.textContent())!;
  expect(text).toContain('reports:nightly');
  for (const task of knownTasks()) expect(text).toContain(task);
  expect(await rowOf(orphan!.id).textContent()).toContain('no worker handles it');
  // it cannot run, so it offers no "run now"
  expect(await rowOf(orphan!.id).getByRole('button', { name: 'Run now' }).count()).toBe(0);
  await checkBothSizes(page, 'ops-jobs-unknown-task');

  await page.goto(`${app.base}/ops/jobs/${orphan!.id}/cancel`);
  await checkBothSizes(page, 'ops-job-cancel');
  await cancelThroughConfirmation(orphan!.id);
  expect(await page.locator('[data-unknown-tasks]').count()).toBe(0);
  const audit = await app.db.sql`select action, outcome from ops_audit where target = ${`job ${orphan!.id}`}`;
  expect(audit).toEqual([{ action: 'job.cancel', outcome: 'succeeded' }]);
}, 90_000);

it('"run now" puts a waiting and a scheduled job first in line, due at once', async () => {
  const first = await allocate();
  const second = await allocate();
  const later = await allocate(inAnHour());
  await page.goto(`${app.base}/ops/jobs`);
  expect(await rowOf(later).textContent()).toContain('scheduled');
  await submit(rowOf(second).getByRole('button', { name: 'Run now' }));
  expect(await page.getByRole('status').textContent()).toContain(`Job ${second}: runs now.`);
  await submit(rowOf(later).getByRole('button', { name: 'Run now' }));
  expect(await page.getByRole('status').textContent()).toContain(`Job ${later}: runs now.`);
  expect(await rowOf(later).textContent()).toContain('waiting');
  // the list is in the order a worker takes jobs: the two run now first, then the one queued first
  const order = await queuedTable()
    .locator('tbody tr')
    .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-job')));
  expect(order.slice(0, 3)).toEqual([second, later, first]);
  expect(await jobRow(later)).toEqual({ priority: -1, due: true, attempts: 0 });
  expect(await jobRow(second)).toEqual({ priority: -1, due: true, attempts: 0 });
  expect(await jobRow(first)).toEqual({ priority: 0, due: true, attempts: 0 });
}, 60_000);

it('cancels a scheduled job after the typed CANCEL; it never runs and leaves no history', async () => {
  const later = await allocate(inAnHour());
  await cancelThroughConfirmation(later);
  expect(await app.db.sql`select 1 from queued_jobs where job_id = ${later}::bigint`).toEqual([]);
  expect(await attempts(later)).toBe(0);
}, 60_000);

it('pauses a task (a real worker takes none of its jobs, others run) and resumes it (they run)', async () => {
  const held = (await app.db.sql<{ id: string }[]>`select id::text from graphile_worker.jobs where task_identifier = ${allocateJob.task}`).map((r) => r.id);
  expect(held).toHaveLength(3); // from the "run now" test
  await page.goto(`${app.base}/ops/jobs`);
  const tasks = page.getByRole('table', { name: /^Tasks/ });
  await submit(tasks.getByRole('button', { name: `Pause ${allocateJob.task}` }));
  expect(await page.getByRole('status').textContent()).toContain(`${allocateJob.task} paused`);
  const row = page.getByRole('table', { name: /^Tasks/ }).locator(`tr[data-task="${allocateJob.task}"]`);
  expect(await row.locator('[data-task-state]').textContent()).toContain('paused by Ada Admin');
  for (const id of held) {
    expect(await rowOf(id).textContent()).toContain('held: task paused');
    expect(await rowOf(id).getByRole('button', { name: 'Run now' }).count()).toBe(0);
  }
  await checkBothSizes(page, 'ops-jobs-paused');
  // a held job's own page says so, and offers no "run now"
  await page.goto(`${app.base}/ops/jobs/${held[0]}`);
  expect(await page.locator('dl.facts').textContent()).toContain('held: its task is paused');
  expect(await page.getByRole('button', { name: 'Run now' }).count()).toBe(0);

  worker = await startWorker(
    app.db.url,
    {
      sql: app.db.sql,
      now: () => new Date(),
      log: makeLogger('silent'),
      pdf: null,
      mailer: createMailer({ SMTP_URL: 'smtp://127.0.0.1:1' }),
      mailFrom: 'Billing <billing@agency.test>',
    },
    { concurrency: 2, pollInterval: 100 },
  );
  // another task's job, queued after them, runs: the paused ones were passed over, not taken
  const [other] = await app.db.sql<{ id: string }[]>`select (graphile_worker.add_job('sessions:cleanup', '{}'::json)).id::text as id`;
  await expect.poll(() => attempts(other!.id), { timeout: 30_000 }).toBe(1);
  for (const id of held) {
    expect(await jobRow(id)).toMatchObject({ due: false, attempts: 0 });
    expect(await attempts(id)).toBe(0);
  }

  await page.goto(`${app.base}/ops/jobs`);
  await submit(page.getByRole('table', { name: /^Tasks/ }).getByRole('button', { name: `Resume ${allocateJob.task}` }));
  expect(await page.getByRole('status').textContent()).toContain(`${allocateJob.task} resumed.`);
  for (const id of held) await expect.poll(() => attempts(id), { timeout: 30_000 }).toBeGreaterThanOrEqual(1);
  const audit = await app.db.sql`select action, detail from ops_audit where action like 'task.%' order by id`;
  expect(audit).toEqual([
    { action: 'task.pause', detail: '3 job(s) held' },
    { action: 'task.resume', detail: '3 job(s) released' },
  ]);
  await worker.stop();
  worker = null;
}, 120_000);

const CONTROLS = 'a[href], button, input:not([type=hidden]), select, textarea';
/** What the keyboard is on: its place among the page's controls, its tag, accessible text and name. */
const focused = (p: Page) =>
  p.evaluate((selector) => {
    const el = document.activeElement as HTMLElement | null;
    if (!el) return '';
    const at = [...document.querySelectorAll(selector)].indexOf(el);
    return `${at}|${el.tagName}|${(el.getAttribute('aria-label') ?? el.textContent ?? '').trim().slice(0, 80)}|${el.getAttribute('name') ?? ''}`;
  }, CONTROLS);

/** Presses Tab until the keyboard is on the control `matches` picks; fails after a whole page of presses. */
async function tabTo(p: Page, matches: (d: string) => boolean) {
  for (let i = 0; i < 300; i++) {
    await p.keyboard.press('Tab');
    if (matches(await focused(p))) return;
  }
  throw new Error('the control was never reached by Tab');
}

it('by keyboard alone: Tab reaches every control of the jobs page in order, Enter pauses, resumes and cancels', async () => {
  const later = await allocate(inAnHour());
  await page.goto(`${app.base}/ops/jobs`);
  // every control of the page, in document order
  const controls = await page.evaluate(
    (selector) =>
      [...document.querySelectorAll<HTMLElement>(selector)]
        .map((el, at) => ({ el, at }))
        .filter(({ el }) => el.getClientRects().length > 0)
        .map(
          ({ el, at }) => `${at}|${el.tagName}|${(el.getAttribute('aria-label') ?? el.textContent ?? '').trim().slice(0, 80)}|${el.getAttribute('name') ?? ''}`,
        ),
    CONTROLS,
  );
  expect(controls.length).toBeGreaterThan(20);
  // a date field takes one Tab per part (month, day, year): a control is counted once however many stops it has
  // (the focused() descriptor starts with its place among the controls, so two alike in a row stay two)
  const visited: string[] = [];
  for (let i = 0; i < 400 && visited.length < controls.length; i++) {
    await page.keyboard.press('Tab');
    const now = await focused(page);
    if (now !== visited.at(-1)) visited.push(now);
  }
  expect(visited).toEqual(controls);

  // Enter on the Pause button pauses; Enter on Resume resumes
  await page.goto(`${app.base}/ops/jobs`);
  await tabTo(page, (d) => d.endsWith(`|BUTTON|Pause ${allocateJob.task}|`));
  await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
  expect(await page.getByRole('status').textContent()).toContain(`${allocateJob.task} paused`);
  await tabTo(page, (d) => d.endsWith(`|BUTTON|Resume ${allocateJob.task}|`));
  await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
  expect(await page.getByRole('status').textContent()).toContain(`${allocateJob.task} resumed.`);

  // Enter on a Cancel link opens the confirmation; typing CANCEL and Enter in the field cancels
  await tabTo(page, (d) => d.includes(`|A|Cancel job ${later} `));
  await Promise.all([page.waitForURL(`**/ops/jobs/${later}/cancel`), page.keyboard.press('Enter')]);
  await tabTo(page, (d) => d.endsWith('|confirmation'));
  await page.keyboard.type('CANCEL');
  await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
  expect(await page.getByRole('status').textContent()).toContain(`Job ${later}: cancelled.`);
  expect(await jobRow(later)).toBeUndefined();
}, 90_000);

it('the live refresh keeps the keyboard on the control it was on', async () => {
  await page.goto(`${app.base}/ops/jobs`);
  await tabTo(page, (d) => d.endsWith(`|BUTTON|Pause ${allocateJob.task}|`));
  const main = page.locator('main');
  const before = await main.getAttribute('data-refreshed');
  // the page refreshes itself every 5 s; the focused button is replaced by its copy
  await expect.poll(() => main.getAttribute('data-refreshed'), { timeout: 20_000 }).not.toBe(before);
  expect(await focused(page)).toMatch(new RegExp(`\\|BUTTON\\|Pause ${allocateJob.task}\\|$`));
  await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
  expect(await page.getByRole('status').textContent()).toContain(`${allocateJob.task} paused`);
  await submit(page.getByRole('table', { name: /^Tasks/ }).getByRole('button', { name: `Resume ${allocateJob.task}` }));
}, 60_000);

it('the live refresh never puts back a field the operator typed in while it was under way', async () => {
  await page.goto(`${app.base}/ops/jobs`);
  const main = page.locator('main');
  // hold the page's next refresh until the operator has typed (a refresh that started before the
  // typing and answered after it wiped the search box: ops-console's search then sent "")
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let asked!: () => void;
  const refreshAsked = new Promise<void>((r) => (asked = r));
  const jobsPage = (url: URL) => url.pathname === '/ops/jobs';
  await page.route(jobsPage, async (route) => {
    if (!route.request().headers()['x-ops-refresh']) return route.continue();
    asked();
    await held;
    await route.continue();
  });
  try {
    await refreshAsked;
    const box = page.getByLabel('Search jobs');
    await box.fill('typed while refreshing');
    await page.getByRole('heading', { level: 1 }).click(); // the field is left, its value not sent
    const answered = page.waitForResponse((r) => r.request().headers()['x-ops-refresh'] === '1');
    release();
    await answered;
    await page.waitForTimeout(300); // the answer's handler runs after the response
    expect(await box.inputValue()).toBe('typed while refreshing');
    const before = await main.getAttribute('data-refreshed');
    await page.waitForTimeout(6_000); // a later refresh leaves the unsent value too
    expect(await box.inputValue()).toBe('typed while refreshing');
    expect(await main.getAttribute('data-refreshed')).toBe(before);
  } finally {
    await page.unroute(jobsPage);
  }
}, 60_000);
