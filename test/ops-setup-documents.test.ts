import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { checkBothSizes, launchBrowser } from './helpers/browser.ts';
import { makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { PNG_1PX } from './helpers/timesheet-full-fixture.ts';

/**
 * Issue 23 in the console's Setup, in Chromium: an Owner sets what the timesheets print — the
 * agency's legal name, address, tax id and bank details on the settings page, a client's billing
 * address, tax id and per-entry lines on its page — each read back through REST; a bad IBAN comes
 * back as the page's error; the logo, uploaded through PATCH /settings, can be removed here.
 */
let app: TestApp;
let browser: Browser;
let page: Page;
let ws: Workspace;
let owner: Person;
let session: SessionCookie;

beforeAll(async () => {
  app = await startTestApp();
  ws = await makeWorkspace(app.db.sql);
  owner = await makeUser(app.db.sql, ws, { role: 'owner', name: 'Olga Owner' });
  session = await login(app, owner.email, owner.password);
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await page.goto(`${app.base}/ops/setup/settings`);
  await page.getByLabel('Email').fill(owner.email);
  await page.getByLabel('Password').fill(owner.password);
  await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign in' }).click()]);
  await page.waitForURL('**/ops/setup/settings');
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

const api = (path: string) => `/api/w/${ws.slug}${path}`;
async function submit(button: ReturnType<Page['getByRole']>) {
  await Promise.all([page.waitForNavigation(), button.click()]);
}

it('the settings page sets what timesheets print; a bad IBAN is the page’s error, saving nothing', async () => {
  await page.getByLabel('Legal name (empty: the workspace name)').fill('Nordlicht Digital GmbH');
  await page.getByLabel('Address').fill('Hafenstraße 12\n20457 Hamburg');
  await page.getByLabel('Tax ID (e.g. VAT number)').fill('DE123456789');
  await page.getByLabel('Account holder').fill('Nordlicht Digital GmbH');
  await page.getByLabel('IBAN').fill('DE88 3704 0044 0532 0130 00');
  await submit(page.getByRole('button', { name: 'Save what timesheets print' }));
  expect(await page.getByRole('alert').textContent()).toContain('not a valid IBAN');
  expect((await app.call('GET', api('/settings'), { session })).body.legalName).toBeNull();

  await page.getByLabel('Legal name (empty: the workspace name)').fill('Nordlicht Digital GmbH');
  await page.getByLabel('Address').fill('Hafenstraße 12\n20457 Hamburg');
  await page.getByLabel('Tax ID (e.g. VAT number)').fill('DE123456789');
  await page.getByLabel('IBAN').fill('DE89 3704 0044 0532 0130 00');
  await page.getByLabel('BIC').fill('cobadeffxxx');
  await submit(page.getByRole('button', { name: 'Save what timesheets print' }));
  expect(await page.getByRole('status').textContent()).toContain('applies from the next billing run');
  expect((await app.call('GET', api('/settings'), { session })).body).toMatchObject({
    legalName: 'Nordlicht Digital GmbH',
    address: 'Hafenstraße 12\n20457 Hamburg',
    taxId: 'DE123456789',
    bankAccountHolder: null,
    bankIban: 'DE89370400440532013000',
    bankBic: 'COBADEFFXXX',
    bankDetails: null,
    logo: null,
  });
  // the form shows what is stored
  expect(await page.getByLabel('IBAN').inputValue()).toBe('DE89370400440532013000');
  await checkBothSizes(page, 'ops-setup-settings-documents');
}, 60_000);

it('uploads a logo (read by its bytes: a GIF named .png is refused), shows it and removes it', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wt-logo-'));
  try {
    const gif = path.join(dir, 'logo.png');
    writeFileSync(gif, Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00'));
    await page.getByLabel('Logo file (PNG or JPEG, at most 256 KB)').setInputFiles(gif);
    await submit(page.getByRole('button', { name: 'Upload the logo' }));
    expect(await page.getByRole('alert').textContent()).toContain('PNG or JPEG');
    expect((await app.call('GET', api('/settings'), { session })).body.logo).toBeNull();
    const png = path.join(dir, 'logo.png');
    writeFileSync(png, Buffer.from(PNG_1PX, 'base64'));
    await page.getByLabel('Logo file (PNG or JPEG, at most 256 KB)').setInputFiles(png);
    await submit(page.getByRole('button', { name: 'Upload the logo' }));
    expect(await page.getByRole('status').textContent()).toContain('The logo is saved');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  expect((await app.call('GET', api('/settings'), { session })).body.logo).toEqual({ contentType: 'image/png', bytes: Buffer.from(PNG_1PX, 'base64').length });
  expect(await page.getByText('Logo: PNG, 1 KB.').count()).toBe(1);
  await submit(page.getByRole('button', { name: 'Remove the logo' }));
  expect(await page.getByRole('status').textContent()).toContain('The logo is removed');
  expect((await app.call('GET', api('/settings'), { session })).body.logo).toBeNull();
}, 60_000);

it('a client’s page sets its billing address, tax id and per-entry lines', async () => {
  const created = await app.call('POST', api('/clients'), { session, body: { name: 'Acme Corp', code: 'ACME' } });
  expect(created.status).toBe(201);
  await page.goto(`${app.base}/ops/setup/clients/${created.body.id}`);
  await page.getByLabel('Billing address').fill('Acme Corp\n1 Main St');
  await page.getByLabel('Tax ID').fill('US-12-3456789');
  await page.getByLabel('Lines').selectOption('entry');
  await submit(page.getByRole('button', { name: 'Save timesheet details' }));
  expect(await page.getByRole('status').textContent()).toContain('the timesheet details are saved');
  expect((await app.call('GET', api(`/clients/${created.body.id}`), { session })).body).toMatchObject({
    billingAddress: 'Acme Corp\n1 Main St',
    taxId: 'US-12-3456789',
    timesheetLines: 'entry',
  });
  await checkBothSizes(page, 'ops-setup-client-documents');
}, 60_000);
