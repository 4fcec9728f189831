import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderCsv } from '../src/core/documents/render/csv.ts';
import { formatterFor, plainHours } from '../src/core/documents/render/format.ts';
import { renderHtml } from '../src/core/documents/render/html.ts';
import { timesheetFixture } from './helpers/timesheet-fixture.ts';

const GOLDEN = path.join(import.meta.dirname, 'golden');
const LOCALES = ['en-US', 'de-DE', 'fr-FR'] as const;

/** Compares with the golden file byte for byte; `UPDATE_GOLDEN=1` rewrites it instead (review the diff). */
async function expectGolden(name: string, actual: string): Promise<void> {
  const file = path.join(GOLDEN, name);
  if (process.env.UPDATE_GOLDEN === '1') {
    await writeFile(file, actual, 'utf8');
    return;
  }
  const expected = await readFile(file, 'utf8').catch(() => {
    throw new Error(`Golden file ${name} is missing: run UPDATE_GOLDEN=1 npx vitest run test/documents-render.test.ts and review it.`);
  });
  expect(actual).toBe(expected);
}

/** RFC 4180 read back, strictly: a stray quote or a bare LF outside quotes is an error. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let i = 0;
  while (i < text.length) {
    let value = '';
    if (text[i] === '"') {
      i += 1;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q < 0) throw new Error('unterminated quoted field');
        value += text.slice(i, q);
        i = q + 1;
        if (text[i] !== '"') break;
        value += '"';
        i += 1;
      }
    } else {
      const end = text.slice(i).search(/[,\r\n"]/);
      value = end < 0 ? text.slice(i) : text.slice(i, i + end);
      i += value.length;
    }
    row.push(value);
    if (text[i] === ',') i += 1;
    else if (text.startsWith('\r\n', i)) {
      rows.push(row);
      row = [];
      i += 2;
    } else throw new Error(`unexpected ${JSON.stringify(text[i])} at ${i}`);
  }
  if (row.length > 0) throw new Error('last row not ended by CRLF');
  return rows;
}

describe('timesheet html', () => {
  it.each(LOCALES)('matches the golden file for %s', async (locale) => {
    await expectGolden(`timesheet-${locale}.html`, renderHtml(timesheetFixture(locale)));
  });

  it('formats dates and hours in the client locale', () => {
    const de = renderHtml(timesheetFixture('de-DE'));
    expect(de).toContain('31.10.2026');
    expect(de).toContain('1,50');
    expect(de).toContain('-0,25'); // the correction
    expect(de).toContain('Stundennachweis');
    expect(de).not.toContain('1.50');
    const fr = renderHtml(timesheetFixture('fr-FR'));
    expect(fr).toContain('31/10/2026');
    expect(fr).toContain('1,50');
    expect(fr).toContain('Relevé d’heures');
    const en = renderHtml(timesheetFixture('en-US'));
    expect(en).toContain('10/31/2026');
    expect(en).toContain('1.50');
    expect(en).toContain('-0.25');
    expect(en).toContain('<html lang="en-US">');
  });

  it('shows one row per ticket and way of billing, with free, bank and correction rows marked', () => {
    const html = renderHtml(timesheetFixture('en-US'));
    const rows = [...html.matchAll(/<tr class="line ([^"]+)"><td class="id">([^<]+)<\/td>(.*?)<\/tr>/gs)].map((m) => ({ cls: m[1], id: m[2], rest: m[3]! }));
    expect(rows.map((r) => `${r.id} ${r.cls}`)).toEqual(['SUP-3 bank', 'SUP-4 paid', 'WEB-12 paid', 'WEB-12 paid correction', 'WEB-15 free']);
    const [bank, , web12, correction, free] = rows;
    expect(bank!.rest).toContain('<span class="tag">Bank: Support 2026</span>');
    expect(bank!.rest).toContain('10/05/2026 – 10/06/2026');
    expect(bank!.rest).toContain('<td class="people">Ben Okafor, Chloé Dubois</td>');
    expect(bank!.rest).toMatch(/<td class="num">3\.00<\/td><td class="num">0\.00<\/td>$/);
    // 90 + 45 minutes over the first and last day, two people; the correction is its own negative row.
    expect(web12!.rest).toContain('10/02/2026 – 10/31/2026');
    expect(web12!.rest).toContain('<td class="people">Anna Schmidt, Ben Okafor</td>');
    expect(web12!.rest).toMatch(/<td class="num">2\.25<\/td><td class="num">2\.25<\/td>$/);
    expect(correction!.rest).toContain('<span class="tag">Correction</span>');
    expect(correction!.rest).toMatch(/<td class="num">-0\.25<\/td><td class="num">-0\.25<\/td>$/);
    // Free: listed with its hours, charged at zero.
    expect(free!.rest).toContain('<span class="tag">Free</span>');
    expect(free!.rest).toMatch(/<td class="num">1\.50<\/td><td class="num">0\.00<\/td>$/);
  });

  it('shows subtotals, totals and the bank box from the model', () => {
    const model = timesheetFixture('en-US');
    const html = renderHtml(model);
    const f = formatterFor('en-US');
    for (const s of model.sections) {
      expect(html).toContain(
        `Subtotal ${s.project.key}</td><td class="num">${f.hours(s.totals.minutes)}</td><td class="num">${f.hours(s.totals.chargedMinutes)}</td>`,
      );
    }
    expect(html).toContain(`<tr><th>Total hours</th><td class="num">${f.hours(model.totals.minutes)}</td></tr>`);
    expect(html).toContain(`<tr><th>Free hours</th><td class="num">${f.hours(model.totals.freeMinutes)}</td></tr>`);
    expect(html).toContain(`<tr><th>Hours drawn from banks</th><td class="num">${f.hours(model.totals.bankMinutes)}</td></tr>`);
    expect(html).toContain(`<tr class="grand"><th>Charged hours</th><td class="num">${f.hours(model.totals.chargedMinutes)}</td></tr>`);
    expect(html).toContain('<tr><td>Support 2026</td><td class="num">10.00</td><td class="num">3.00</td><td class="num">7.00</td></tr>');
    expect(html).toContain('<tr><th>No.</th><td>MUS-2026-0007</td></tr>');
    expect(html).toContain('<tr><th>Version</th><td>2</td></tr>');
    expect(html).toContain('<tr><th>Issued</th><td>11/02/2026</td></tr>');
    expect(html).toContain('<div class="name">Nordlicht Digital GmbH</div>');
  });

  it('escapes every text and stays self-contained', () => {
    const html = renderHtml(timesheetFixture('en-US'));
    expect(html).not.toMatch(/<script/i);
    expect(html).toContain('Fix &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;, &quot;quoted&quot; title');
    expect(html).toContain('Müller &amp; Söhne AG');
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/\b(src|href)\s*=|url\(|@import/i);
    expect(html).toContain('<style>');
    expect(html).toMatch(/@page \{ size: A4; margin: [^}]+\}/);
  });

  it('falls back to en-GB for an unknown or malformed locale', () => {
    for (const locale of ['xx-INVALID', 'not a locale!', '']) {
      const html = renderHtml(timesheetFixture(locale));
      expect(html).toContain('<html lang="en-GB">');
      expect(html).toContain('01/10/2026 – 31/10/2026');
      expect(html).toContain('Timesheet');
    }
    // A language without a region is a locale Intl knows: German words and numbers.
    expect(renderHtml(timesheetFixture('de'))).toContain('<tr><th>Zeitraum</th><td>01.10.2026 – 31.10.2026</td></tr>');
  });

  it('says so when a sheet has no lines, rather than showing empty tables', () => {
    const empty = { ...timesheetFixture('de-DE'), sections: [], banks: [], totals: { minutes: 0, chargedMinutes: 0, freeMinutes: 0, bankMinutes: 0 } };
    const html = renderHtml(empty);
    expect(html).toContain('<p class="empty">Auf diesem Stundennachweis wurde keine Zeit abgerechnet.</p>');
    expect(html).not.toContain('<table class="lines">');
    expect(html).toContain('<tr class="grand"><th>Berechnete Stunden</th><td class="num">0,00</td></tr>');
    expect(renderCsv(empty)).toBe('number,client,project,ticket,text,date,person,category,minutes,hours,billable,policy\r\n');
  });

  it('renders the same bytes for the same model', () => {
    expect(renderHtml(timesheetFixture('fr-FR'))).toBe(renderHtml(timesheetFixture('fr-FR')));
  });
});

describe('timesheet csv', () => {
  it.each(LOCALES)('matches the golden file for %s', async (locale) => {
    await expectGolden(`timesheet-${locale}.csv`, renderCsv(timesheetFixture(locale)));
  });

  it('is RFC 4180 with CRLF, a header and one row per entry, without a byte order mark', () => {
    const model = timesheetFixture('de-DE');
    const csv = renderCsv(model);
    expect(csv.charCodeAt(0)).not.toBe(0xfeff);
    expect(csv.endsWith('\r\n')).toBe(true);
    // Every LF outside the one quoted multi-line text ends a CRLF.
    expect(csv.replace(/"[^"]*(""[^"]*)*"/g, '').match(/(?<!\r)\n/g)).toBeNull();
    const [header, ...rows] = parseCsv(csv);
    expect(header).toEqual(['number', 'client', 'project', 'ticket', 'text', 'date', 'person', 'category', 'minutes', 'hours', 'billable', 'policy']);
    const lines = model.sections.flatMap((s) => s.lines.map((l) => ({ key: s.project.key, ...l })));
    expect(rows).toHaveLength(lines.length);
    rows.forEach((row, i) => {
      const l = lines[i]!;
      expect(row).toHaveLength(12);
      expect(row.slice(0, 4)).toEqual(['MUS-2026-0007', 'Müller & Söhne AG', l.key, l.humanId]);
      expect(row[5]).toBe(l.spentOn);
      expect(row[6]).toBe(l.person);
      expect(row[7]).toBe(l.category ?? '');
      expect(row[8]).toBe(String(l.minutes));
      expect(row[9]).toMatch(/^-?\d+\.\d\d$/);
      expect(row[10]).toBe(l.policy === 'paid' ? 'true' : 'false');
      expect(row[11]).toBe(l.policy === 'bank' ? `bank:${l.bankName}` : l.policy);
    });
  });

  it('quotes commas, quotes and line breaks, and defuses formulas', () => {
    const csv = renderCsv(timesheetFixture('en-US'));
    expect(csv).toContain(',"Fix <script>alert(""x"")</script>, ""quoted"" title",');
    expect(csv).toContain(`,"'=SUM(A1:A2) budget\nreview",`);
    expect(csv).toContain('MUS-2026-0007,Müller & Söhne AG,WEB,WEB-12,');
    expect(csv).toContain(',2026-10-20,Anna Schmidt,Senior developer,-15,-0.25,true,paid\r\n');
    expect(csv).toContain(',2026-10-05,Ben Okafor,,120,2.00,false,bank:Support 2026\r\n');
    expect(csv).toContain(',2026-10-10,Anna Schmidt,Senior developer,90,1.50,false,free\r\n');
  });

  it('never localises numbers or dates', () => {
    const [en, de, fr] = LOCALES.map((l) => renderCsv(timesheetFixture(l)));
    for (const csv of [en!, de!, fr!]) {
      expect(csv).toContain(',90,1.50,');
      expect(csv).not.toContain('1,50');
      expect(csv).not.toMatch(/\d\d[./]\d\d[./]\d{4}/);
    }
    expect(de).toBe(en);
    expect(fr).toBe(en);
  });

  it('writes hours with a dot and two decimals, rounded from exact minutes', () => {
    expect([0, 1, 20, 90, -15, 61, 599, 100_000].map(plainHours)).toEqual(['0.00', '0.02', '0.33', '1.50', '-0.25', '1.02', '9.98', '1666.67']);
    for (let m = -200; m <= 200; m++) expect(plainHours(m)).toBe((m / 60).toFixed(2).replace(/^-0\.00$/, '0.00'));
  });
});
