import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderHtml } from '../src/core/documents/render/html.ts';
import { LOGO_MAX_BYTES, logoType, readLogo } from '../src/core/workspaces/logo.ts';
import { normaliseBic, normaliseIban } from '../src/core/workspaces/bank.ts';
import { timesheetFixture } from './helpers/timesheet-fixture.ts';
import { fullTimesheetFixture, PNG_1PX } from './helpers/timesheet-full-fixture.ts';

/**
 * What issue 23 adds to the timesheet's html: the parties' details, logo, PO number, bank details
 * and due date, free and bank time's worth, per-entry lines with their rate, the replaced number,
 * a viewport. A document without any of it stays byte for byte as before (documents-render's goldens).
 */

const GOLDEN = path.join(import.meta.dirname, 'golden');
const LOCALES = ['en-US', 'de-DE', 'fr-FR'] as const;

async function expectGolden(name: string, actual: string): Promise<void> {
  const file = path.join(GOLDEN, name);
  if (process.env.UPDATE_GOLDEN === '1') {
    await writeFile(file, actual, 'utf8');
    return;
  }
  const expected = await readFile(file, 'utf8').catch(() => {
    throw new Error(`Golden file ${name} is missing: run UPDATE_GOLDEN=1 npx vitest run test/documents-content.test.ts and review it.`);
  });
  expect(actual).toBe(expected);
}

describe('a fully featured timesheet', () => {
  it.each(LOCALES)('matches the golden file for %s (per-entry lines)', async (locale) => {
    await expectGolden(`timesheet-full-${locale}.html`, renderHtml(fullTimesheetFixture(locale)));
  });

  it('prints the agency block (logo embedded, legal name, address, tax id), the client block, the PO number and the replaced number', () => {
    const html = renderHtml(fullTimesheetFixture('en-US'));
    expect(html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(html).toContain(`<img class="logo" src="data:image/png;base64,${PNG_1PX}" alt="">`);
    expect(html).toContain('<div class="name">Nordlicht Digital GmbH</div><div class="address">Hafenstraße 12\n20457 Hamburg\nGermany</div>');
    expect(html).toContain('<div class="taxid">Tax ID: DE123456789</div>');
    expect(html).toContain('<div class="name">Müller &amp; Söhne AG</div><div class="address">Müller &amp; Söhne AG\nAccounts payable');
    expect(html).toContain('<div class="taxid">Tax ID: DE987654321</div>');
    expect(html).toContain('<tr><th>PO number</th><td>PO-4711/B</td></tr>');
    expect(html).toContain('<p class="replaces">Replaces No. MUS-2026-0006</p>');
    // nothing is ever fetched: no other URL than the embedded data: one
    expect(html).not.toMatch(/(src|href)="(?!data:)/);
    expect(html).not.toMatch(/url\(/);
  });

  it('prints the bank details and the due date under the total', () => {
    const html = renderHtml(fullTimesheetFixture('de-DE'));
    const payment = html.slice(html.indexOf('<section class="payment">'));
    expect(html.indexOf('<section class="payment">')).toBeGreaterThan(html.indexOf('Gesamtbetrag'));
    expect(payment).toContain('<h2>Zahlung</h2>');
    expect(payment).toContain('<tr><th>Fällig am</th><td>02.12.2026</td></tr>');
    expect(payment).toContain('<tr><th>Kontoinhaber</th><td>Nordlicht Digital GmbH</td></tr>');
    expect(payment).toContain('<tr><th>IBAN</th><td>DE89 3704 0044 0532 0130 00</td></tr>');
    expect(payment).toContain('<tr><th>BIC</th><td>COBADEFFXXX</td></tr>');
    expect(payment).toContain('<p class="bank-details">Please quote the document number.</p>');
  });

  it('per-entry lines: date, person, hours, the rate of each line, its amount; free and bank time at zero with what it would have cost', () => {
    const html = renderHtml(fullTimesheetFixture('en-US'));
    expect(html).toContain(
      '<thead><tr><th>Date</th><th>Ticket</th><th>Description</th><th>Person</th><th class="num">Hours</th><th class="num">Rate/h</th><th class="num">Amount</th></tr></thead>',
    );
    // WEB-12 on 2 Oct: 90 minutes at 120.00 = 180.00
    expect(html).toContain(
      '<tr class="line paid"><td class="date">10/02/2026</td><td class="id">WEB-12</td><td class="text">Fix &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;, &quot;quoted&quot; title</td><td class="people">Anna Schmidt</td><td class="num">1.50</td><td class="num">€120.00</td><td class="num">€180.00</td></tr>',
    );
    // the free line: charged 0.00, worth 180.00; a bank line: worth 240.00
    expect(html).toMatch(/<tr class="line free">.*<td class="num">€0\.00<span class="worth">at rate €180\.00<\/span><\/td><\/tr>/);
    expect(html).toMatch(
      /<tr class="line bank">.*<td class="people">Ben Okafor<\/td>.*<td class="num">€0\.00<span class="worth">at rate €240\.00<\/span><\/td><\/tr>/,
    );
    // the staff-only note of an entry is not in the model, so it cannot be printed; a correction is its own signed line
    expect(html).toMatch(
      /<tr class="line paid correction"><td class="date">10\/20\/2026<\/td>.*<td class="num">-0\.25<\/td><td class="num">€120\.00<\/td><td class="num">-€30\.00<\/td><\/tr>/,
    );
  });

  it('per-ticket rows of a priced document show free and bank time at zero with their worth too', () => {
    const html = renderHtml(fullTimesheetFixture('fr-FR', { lines: 'ticket' }));
    expect(html).toContain('<th class="num">Facturé</th>');
    expect(html).toMatch(/<tr class="line free">.*<td class="num">0,00\u00a0€<span class="worth">au tarif 180,00\u00a0€<\/span><\/td><\/tr>/);
    // SUP-3: 180 bank minutes at 120.00 would have cost 360.00
    expect(html).toMatch(/<tr class="line bank"><td class="id">SUP-3<\/td>.*<span class="worth">au tarif 360,00\u00a0€<\/span><\/td><\/tr>/);
  });

  it.each([
    ['en-US', 'Replaces No. MUS-2026-0006'],
    ['de-DE', 'Ersetzt Nr. MUS-2026-0006'],
    ['fr-FR', 'Remplace le n° MUS-2026-0006'],
  ])('names the number it replaces in %s', (locale, line) => {
    expect(renderHtml({ ...timesheetFixture(locale), replacesNumber: 'MUS-2026-0006' })).toContain(`<p class="replaces">${line}</p>`);
  });

  it('a document without any of it has no viewport and no new part (as before issue 23)', () => {
    const html = renderHtml(timesheetFixture('en-US'));
    for (const part of ['viewport', 'class="logo"', 'class="payment"', 'class="replaces"', 'class="worth"', 'PO number', 'Tax ID'])
      expect(html).not.toContain(part);
  });

  it('escapes every detail (they are settings anyone with admin rights types)', () => {
    const m = fullTimesheetFixture('en-US');
    const html = renderHtml({ ...m, poNumber: '<b>x</b>', agency: { ...m.agency, address: '<img src=x>' }, bank: { ...m.bank!, details: '"><script>' } });
    expect(html).not.toContain('<b>x</b>');
    expect(html).not.toContain('<img src=x>');
    expect(html).not.toContain('<script>');
  });
});

describe('logo and bank input', () => {
  const png = Buffer.from(PNG_1PX, 'base64');
  const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00]);
  const reason = (f: () => unknown) => {
    try {
      f();
      return 'accepted';
    } catch (e) {
      return (e as { details?: { reason?: string } }).details?.reason ?? String(e);
    }
  };

  it('reads the type from the bytes only: PNG and JPEG, nothing else', () => {
    expect(logoType(png)).toBe('image/png');
    expect(logoType(jpeg)).toBe('image/jpeg');
    expect(logoType(Buffer.from('GIF89a\x01\x00\x01\x00'))).toBeNull();
    expect(logoType(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBeNull();
    expect(logoType(png.subarray(0, 8))).toBeNull();
    expect(readLogo(PNG_1PX)).toEqual({ contentType: 'image/png', content: png });
    expect(readLogo(jpeg.toString('base64')).contentType).toBe('image/jpeg');
  });

  it('refuses what is not base64, not an image, or too large', () => {
    expect(reason(() => readLogo('not base64!'))).toBe('bad_logo');
    expect(reason(() => readLogo(''))).toBe('bad_logo');
    expect(reason(() => readLogo(Buffer.from('GIF89a\x01\x00\x01\x00').toString('base64')))).toBe('bad_logo');
    const big = Buffer.concat([png, Buffer.alloc(LOGO_MAX_BYTES)]);
    expect(reason(() => readLogo(big.toString('base64')))).toBe('logo_too_large');
  });

  it('checks an IBAN by its check digits and groups nothing into storage', () => {
    expect(normaliseIban('de89 3704 0044 0532 0130 00')).toBe('DE89370400440532013000');
    expect(normaliseIban('GB82 WEST 1234 5698 7654 32')).toBe('GB82WEST12345698765432');
    expect(reason(() => normaliseIban('DE88370400440532013000'))).toBe('bad_iban');
    expect(reason(() => normaliseIban('DE89'))).toBe('bad_iban');
    expect(normaliseBic('cobadeffxxx')).toBe('COBADEFFXXX');
    expect(reason(() => normaliseBic('COBA'))).toBe('bad_bic');
  });
});
