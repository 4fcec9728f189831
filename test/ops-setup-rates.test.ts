import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { readableError, ratesSent } from '../src/ops/pages/setup-rates.ts';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { checkBothSizes, launchBrowser } from './helpers/browser.ts';
import { makeCategory, makeProject, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

/**
 * Issue 23, the console's Setup page for rates in Chromium: an Owner adds a workspace default and a
 * project's override, replaces one with a future rate, sees which applies today, gets each refusal
 * of the table back in the page in the operator's words, and removes a row; every state read back
 * through GET /rates; axe at both sizes without sideways scrolling.
 */
let app: TestApp;
let browser: Browser;
let page: Page;
let ws: Workspace;
let owner: Person;
let session: SessionCookie;
let dev: { id: string; name: string };
let web: { id: string };

beforeAll(async () => {
  app = await startTestApp();
  ws = await makeWorkspace(app.db.sql);
  owner = await makeUser(app.db.sql, ws, { role: 'owner', name: 'Olga Owner' });
  dev = await makeCategory(app.db.sql, ws, 'Senior developer');
  web = await makeProject(app.db.sql, ws, { key: 'WEB' });
  session = await login(app, owner.email, owner.password);
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

const rates = async () => {
  const res = await app.call('GET', `/api/w/${ws.slug}/rates`, { session });
  expect(res.status).toBe(200);
  return res.body.rates;
};
async function submit(p: Page) {
  await Promise.all([p.waitForNavigation(), p.getByRole('button', { name: 'Save rates' }).click()]);
}
async function fillRow(n: number, row: { category?: string; scope?: string; currency?: string; hourly?: string; from?: string }) {
  if (row.category) await page.getByLabel(`Category of rate ${n}`).selectOption({ label: row.category });
  if (row.scope) await page.getByLabel(`Scope of rate ${n}`).selectOption(row.scope);
  if (row.currency !== undefined) await page.getByLabel(`Currency of rate ${n}`).fill(row.currency);
  if (row.hourly !== undefined) await page.getByLabel(`Hourly rate of rate ${n}`).fill(row.hourly);
  if (row.from !== undefined) await page.getByLabel(`Effective from, rate ${n}`).fill(row.from);
}
const notice = () => page.getByRole('status').textContent();
const alert = () => page.getByRole('alert').textContent();

it('signs in and finds Rates in the Setup navigation, with two blank rows', async () => {
  await page.goto(`${app.base}/ops/setup/rates`);
  await page.getByLabel('Email').fill(owner.email);
  await page.getByLabel('Password').fill(owner.password);
  await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign in' }).click()]);
  await page.waitForURL('**/ops/setup/rates');
  expect(await page.getByRole('navigation', { name: 'Setup' }).getByRole('link', { name: 'Rates' }).getAttribute('aria-current')).toBe('page');
  expect(await page.getByLabel(/^Category of rate/).count()).toBe(2);
  await checkBothSizes(page, 'ops-setup-rates-empty');
}, 60_000);

it('adds a workspace default and a project override in one save', async () => {
  await fillRow(1, { category: 'Senior developer', currency: 'eur', hourly: '95.50', from: '2026-01-01' });
  await fillRow(2, { category: 'Senior developer', scope: `project:${web.id}`, currency: 'EUR', hourly: '120', from: '2026-01-01' });
  await submit(page);
  expect(await notice()).toContain('2 rate(s) saved.');
  expect(await rates()).toMatchObject([
    { categoryId: dev.id, clientId: null, projectId: null, currency: 'EUR', hourlyRateMinor: 9550, effectiveFrom: '2026-01-01' },
    { categoryId: dev.id, clientId: null, projectId: web.id, currency: 'EUR', hourlyRateMinor: 12000, effectiveFrom: '2026-01-01' },
  ]);
  expect(await page.getByLabel('Hourly rate of rate 1').inputValue()).toBe('95.50');
}, 60_000);

it('adds a future rate beside the current one and says which applies today', async () => {
  await fillRow(3, { category: 'Senior developer', currency: 'EUR', hourly: '99', from: '2999-01-01' });
  await submit(page);
  expect(await notice()).toContain('3 rate(s) saved.');
  const cells = await page.locator('td[data-label="Applies"]').allTextContents();
  // the two blank rows say new
  expect(cells.map((c) => c.trim())).toEqual(['current', 'future', 'current', 'new', 'new']);
  await checkBothSizes(page, 'ops-setup-rates');
}, 60_000);

it('shows each refusal in the page, naming the row from 1, and changes nothing', async () => {
  const before = await rates();
  await fillRow(1, { hourly: '95.505' });
  await submit(page);
  expect(await alert()).toContain('Rate 1, hourly rate: not an amount');
  await fillRow(4, { category: 'Senior developer', currency: 'ZZZ', hourly: '1', from: '2026-02-01' });
  await submit(page);
  expect(await alert()).toMatch(/Rate 4, currency: Not an ISO 4217 currency code/);
  // the same category, scope, currency and day as row 1
  await fillRow(4, { category: 'Senior developer', currency: 'EUR', hourly: '1', from: '2026-01-01' });
  await submit(page);
  expect(await alert()).toContain('Rates 1 and 4 are for the same category, scope and currency from the same day.');
  expect(await rates()).toEqual(before);
}, 60_000);

it('replaces a row and removes one', async () => {
  await fillRow(1, { hourly: '100' });
  await page.getByLabel('Remove rate 2').check(); // the future one (rows: default, its future rate, the project's)
  await submit(page);
  expect(await notice()).toContain('2 rate(s) saved.');
  expect((await rates()).map((r: any) => [r.projectId, r.hourlyRateMinor, r.effectiveFrom])).toEqual([
    [null, 10000, '2026-01-01'],
    [web.id, 12000, '2026-01-01'],
  ]);
}, 60_000);

it('builds the table from the form as typed: blank rows out, amounts exact in the currency’s minor units', () => {
  const sent = ratesSent({
    count: '3',
    categoryId_0: 'c',
    scope_0: 'client:k',
    currency_0: 'JPY',
    hourly_0: '7000',
    from_0: '2026-01-01',
    categoryId_1: '',
    scope_1: '',
    currency_1: '',
    hourly_1: '',
    from_1: '',
    categoryId_2: 'c',
    scope_2: 'project:p',
    currency_2: 'KWD',
    hourly_2: '1.250',
    from_2: '2026-01-01',
  });
  expect(sent).toEqual([
    { categoryId: 'c', clientId: 'k', projectId: null, currency: 'JPY', hourlyRateMinor: 7000, effectiveFrom: '2026-01-01' },
    { categoryId: 'c', clientId: null, projectId: 'p', currency: 'KWD', hourlyRateMinor: 1250, effectiveFrom: '2026-01-01' },
  ]);
  expect(readableError('Rate 0 names no client of this workspace.')).toBe('Rate 1 names no client of this workspace.');
});
