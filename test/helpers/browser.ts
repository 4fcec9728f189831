import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { CHROMIUM_ARGS } from '../../src/jobs/machinery/pdf.ts';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';

/** Debian's Chromium; a browser test fails (never skips) without it. */
export const CHROMIUM = '/usr/bin/chromium';

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is missing at ${CHROMIUM} (apt-get install chromium): the console's browser tests cannot run`);
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

const AXE = readFileSync(resolve(import.meta.dirname, '../../node_modules/axe-core/axe.min.js'), 'utf8');
const SHOTS = resolve(import.meta.dirname, '../../.data/screenshots');

/** Loads axe-core into the page unless it is there already (the same document checked at a second size). */
export async function injectAxe(page: Page): Promise<void> {
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(AXE);
}

/**
 * Runs axe-core inside the page (evaluated over the DevTools protocol, so the console's CSP
 * stays as it is) and asserts no serious or critical violation, then checks nothing scrolls
 * sideways and saves a screenshot, printing its path.
 */
export async function checkPage(page: Page, name: string): Promise<void> {
  await injectAxe(page);
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as { axe: { run: (ctx: Document) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }
    ).axe;
    const r = await axe.run(document);
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
  expect(violations, `axe on ${name}`).toEqual([]);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow, `${name} scrolls sideways`).toBeLessThanOrEqual(0);
  mkdirSync(SHOTS, { recursive: true });
  // JPEG: for people to look at (nothing compares pixels), and cheaper for Chromium to encode than PNG
  const path = join(SHOTS, `${name.replace(/[^a-z0-9-]+/gi, '_')}.jpeg`);
  await page.screenshot({ path, fullPage: true, type: 'jpeg', quality: 80 });
  console.log(`screenshot: ${path}`);
}

/** Checks the page at both sizes the console is made for. */
export async function checkBothSizes(page: Page, name: string): Promise<void> {
  for (const [label, size] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    await page.setViewportSize(size);
    await checkPage(page, `${name}-${label}`);
  }
  await page.setViewportSize(DESKTOP);
}
