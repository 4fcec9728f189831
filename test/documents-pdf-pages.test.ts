import { afterAll, describe, expect, it } from 'vitest';
import { timesheetFooter } from '../src/core/documents/pdf-renderer.ts';
import { renderHtml } from '../src/core/documents/render/html.ts';
import { labelsFor } from '../src/core/documents/render/labels.ts';
import { pdfPages, pdfRenderer } from './helpers/pdf-tools.ts';
import { largeTimesheet, timesheetFixture } from './helpers/timesheet-fixture.ts';

const pdf = pdfRenderer();
afterAll(() => pdf.close());

/** "Page 1 of 3" in the document's language, as pdftotext reads it back. */
const pageOf = {
  'en-US': (i: number, n: number) => `Page ${i} of ${n}`,
  'de-DE': (i: number, n: number) => `Seite ${i} von ${n}`,
  'fr-FR': (i: number, n: number) => `Page ${i} sur ${n}`,
};

describe('pdf pages (issue 23: page x of y, repeated table headers)', () => {
  for (const locale of ['en-US', 'de-DE', 'fr-FR'] as const) {
    it(`numbers every page of a multi-page ${locale} timesheet and repeats the table header on each`, async () => {
      const model = largeTimesheet(150, locale);
      const pages = pdfPages(await pdf.render(renderHtml(model), timesheetFooter(model)));
      expect(pages.length).toBeGreaterThan(2);
      const l = labelsFor(locale);
      const header = [l.ticket, l.description, l.dates, l.people, l.hours, l.charged].join(' ');
      pages.forEach((text, i) => {
        expect(text, `page ${i + 1}`).toContain(pageOf[locale](i + 1, pages.length));
        expect(text, `page ${i + 1}`).toContain(`${l.title} ${model.number}`);
        expect(text, `page ${i + 1}`).toContain(header);
      });
      // each line once, on some page: the header repeats, the rows do not
      const all = pages.join(' ');
      for (const line of model.sections[0]!.lines) expect(all.split(`${line.humanId} `).length - 1, line.humanId).toBe(1);
    });
  }

  it('numbers a one-page timesheet "Page 1 of 1"', async () => {
    const model = timesheetFixture('en-GB');
    const pages = pdfPages(await pdf.render(renderHtml(model), timesheetFooter(model)));
    expect(pages).toHaveLength(1);
    expect(pages[0]).toContain('Page 1 of 1');
  });

  it('prints the footer as text: markup in it is escaped, not interpreted', async () => {
    const pages = pdfPages(await pdf.render('<p>Body</p>', { start: '<b>A & B</b> {page}', end: '<i>{page}/{pages}</i>' }));
    expect(pages[0]).toContain('<b>A & B</b> {page}');
    expect(pages[0]).toContain('<i>1/1</i>');
  });

  it('takes the words from the client locale, English for a language it does not know', () => {
    expect(timesheetFooter(largeTimesheet(1, 'de-AT'))).toEqual({ start: 'Stundennachweis MUS-2026-0007', end: 'Seite {page} von {pages}' });
    expect(timesheetFooter(largeTimesheet(1, 'fr-CA')).end).toBe('Page {page} sur {pages}');
    expect(timesheetFooter(largeTimesheet(1, 'ja-JP')).end).toBe('Page {page} of {pages}');
    expect(timesheetFooter(largeTimesheet(1, 'not a locale')).end).toBe('Page {page} of {pages}');
  });
});
