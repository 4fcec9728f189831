import type { TimesheetModel } from '../../src/core/documents/timesheet-model.ts';
import { timesheetFixture } from './timesheet-fixture.ts';

/** A 1×1 PNG (a real one: its signature, IHDR, IDAT and IEND). */
export const PNG_1PX = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/**
 * The renderer fixture with everything issue 23 prints: money (EUR at 120.00/h, free and bank
 * time at zero with their worth, a correction), tax and terms, the agency's legal name, address,
 * tax id, logo and bank details, the client's billing address and tax id, a PO number, the
 * number it replaces; per-entry lines unless `lines: 'ticket'`.
 */
export function fullTimesheetFixture(locale: string, opts: { lines?: 'ticket' | 'entry' } = {}): TimesheetModel {
  const base = timesheetFixture(locale);
  const RATE = 12000;
  const sections = base.sections.map((s) => {
    const lines = s.lines.map((l) => {
      const list = Math.sign(l.minutes) * Math.round((Math.abs(l.minutes) * RATE) / 60);
      return { ...l, rateMinor: RATE, listAmountMinor: list, amountMinor: l.policy === 'paid' ? list : 0 };
    });
    return { ...s, lines, totals: { ...s.totals, amountMinor: lines.reduce((n, l) => n + l.amountMinor, 0) } };
  });
  return {
    ...base,
    agency: {
      name: 'Nordlicht',
      legalName: 'Nordlicht Digital GmbH',
      address: 'Hafenstraße 12\n20457 Hamburg\nGermany',
      taxId: 'DE123456789',
      logo: { contentType: 'image/png', base64: PNG_1PX },
    },
    client: { ...base.client, billingAddress: 'Müller & Söhne AG\nAccounts payable\nKönigsallee 1\n40212 Düsseldorf', taxId: 'DE987654321' },
    currency: 'EUR',
    tax: { rateBasisPoints: 1900, label: 'MwSt. 19 %', note: null },
    dueOn: '2026-12-02',
    bank: { accountHolder: 'Nordlicht Digital GmbH', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX', details: 'Please quote the document number.' },
    poNumber: 'PO-4711/B',
    replacesNumber: 'MUS-2026-0006',
    ...(opts.lines === 'ticket' ? {} : { lineLayout: 'entry' as const }),
    sections,
    totals: { ...base.totals, amountMinor: sections.reduce((n, s) => n + (s.totals.amountMinor ?? 0), 0) },
  };
}
