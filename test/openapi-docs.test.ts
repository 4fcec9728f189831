import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM_ARGS } from '../src/jobs/machinery/pdf.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';

/** /api/docs renders the document in a real headless Chromium, from this origin only (no CDN). */
const CHROMIUM = '/usr/bin/chromium';

let app: TestApp;
let browser: Browser;

beforeAll(async () => {
  app = await startTestApp();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});
afterAll(async () => {
  await browser?.close();
  await app.close();
});

it('renders the operations of the document and requests nothing from another origin', async () => {
  const page = await browser.newPage();
  const requests: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  const res = await page.goto(`${app.base}/api/docs`);
  expect(res?.status()).toBe(200);
  expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
  await page.locator('.opblock').first().waitFor();
  expect(await page.locator('.opblock').count()).toBeGreaterThan(40);
  expect(await page.getByText('/api/w/{slug}/tickets/{ref}/move').count()).toBeGreaterThan(0);
  const foreign = requests.filter((u) => !u.startsWith(app.base) && !u.startsWith('data:'));
  expect(foreign).toEqual([]);
  expect(requests).toContain(`${app.base}/api/openapi.json`);
});

it('serves only the page’s own files, with their content types', async () => {
  const css = await app.call('GET', '/api/docs/swagger-ui.css');
  expect(css.status).toBe(200);
  expect(css.headers.get('content-type')).toContain('text/css');
  const js = await app.call('GET', '/api/docs/start.js');
  expect(js.headers.get('content-type')).toContain('text/javascript');
  expect((await app.call('GET', '/api/docs/package.json')).status).toBe(404);
  expect((await app.call('GET', '/api/docs/..%2Fpackage.json')).status).toBe(404);
});
