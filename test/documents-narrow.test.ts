import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_ARGS, createPdfRenderer, findChromium } from '../src/jobs/machinery/pdf.ts';
import { renderHtml } from '../src/core/documents/render/html.ts';
import type { TimesheetModel } from '../src/core/documents/timesheet-model.ts';
import { makeLogger } from '../src/log.ts';
import { fullTimesheetFixture } from './helpers/timesheet-full-fixture.ts';

/**
 * A rich timesheet (issue 23) reads on a phone: in Chromium at 390 px nothing is wider than the
 * window; and its pdf (the same html printed on A4) shows the new parts to pdftotext, with the line
 * table's header repeated on every page. A missing chromium or poppler fails, never skips.
 */

const PDFTOTEXT = '/usr/bin/pdftotext';
const dir = mkdtempSync(path.join(tmpdir(), 'wt-narrow-'));
let browser: Browser;

beforeAll(async () => {
  const exe = findChromium(process.env.CHROMIUM_PATH);
  expect(exe, 'no chromium found: apt-get install -y chromium').not.toBeNull();
  browser = await chromium.launch({ executablePath: exe!, args: CHROMIUM_ARGS });
});
afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The document's scroll width and the window's inner width in Chromium at 390 × 844 (a phone), JavaScript off as for the pdf. */
async function widthsAt390(html: string): Promise<{ scrollWidth: number; innerWidth: number }> {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, javaScriptEnabled: false });
  try {
    const page = await context.newPage();
    await page.route('**/*', (route) => (route.request().url().startsWith('data:') ? route.continue() : route.abort()));
    await page.setContent(html, { waitUntil: 'load' });
    // evaluate runs in a utility world, which works with the page's own scripts off
    return await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
  } finally {
    await context.close();
  }
}

/** A long per-entry sheet: the fixture's lines repeated, so the pdf runs over several pages. */
function longSheet(locale: string): TimesheetModel {
  const m = fullTimesheetFixture(locale);
  const [first, ...rest] = m.sections;
  const lines = Array.from({ length: 30 }, () => first!.lines).flat();
  return { ...m, sections: [{ ...first!, lines }, ...rest] };
}

describe('the html at 390 px', () => {
  it.each([
    ['per-entry lines, en-US', fullTimesheetFixture('en-US')],
    ['per-ticket rows, de-DE', fullTimesheetFixture('de-DE', { lines: 'ticket' })],
    ['per-entry lines, fr-FR', fullTimesheetFixture('fr-FR')],
  ])('has no horizontal overflow: %s', async (_name, model) => {
    const { scrollWidth, innerWidth } = await widthsAt390(renderHtml(model));
    expect(innerWidth).toBe(390);
    expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
  });
});

describe('the pdf of a rich timesheet', () => {
  it('shows the agency and client details, PO number, replaced number, rates, worth, bank details and due date; headers repeat', async () => {
    expect(existsSync(PDFTOTEXT), `${PDFTOTEXT} is missing: apt-get install -y poppler-utils`).toBe(true);
    const pdf = createPdfRenderer(findChromium(process.env.CHROMIUM_PATH), makeLogger('silent'))!;
    try {
      const model = longSheet('en-US');
      const first = model.sections[0]!;
      const bytes = await pdf.render(renderHtml(model));
      const file = path.join(dir, 'rich.pdf');
      writeFileSync(file, bytes);
      const raw = execFileSync(PDFTOTEXT, [file, '-'], { encoding: 'utf8' });
      const text = raw.replace(/\s+/g, ' ');
      for (const part of [
        'Nordlicht Digital GmbH',
        'Hafenstraße 12',
        'Tax ID: DE123456789',
        'Königsallee 1',
        'Tax ID: DE987654321',
        'PO number',
        'PO-4711/B',
        'Replaces No. MUS-2026-0006',
        '€120.00',
        'at rate €180.00',
        'Payment',
        'DE89 3704 0044 0532 0130 00',
        'COBADEFFXXX',
        'Please quote the document number.',
        '12/02/2026',
      ]) {
        expect(text).toContain(part);
      }
      // every page the line table runs over starts with its header row again
      const pages = raw.split('\f').filter((p) => p.trim() !== '');
      expect(pages.length).toBeGreaterThan(1);
      const withLines = pages.filter((p) => p.includes(first.lines[0]!.humanId));
      expect(withLines.length).toBeGreaterThan(1);
      for (const page of withLines) expect(page.replace(/\s+/g, ' ')).toMatch(/Date Ticket Description Person Hours Rate\/h/);
    } finally {
      await pdf.close();
    }
  });
});
