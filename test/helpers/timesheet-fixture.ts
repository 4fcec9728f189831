import type { LinePolicy, TimesheetLine, TimesheetModel, TimesheetSection, TimesheetTotals } from '../../src/core/documents/timesheet-model.ts';

/**
 * A hand-built combined timesheet for the renderer tests: two projects; paid, free and bank
 * lines; a correction; a title carrying markup, a comma and quotes; a text a spreadsheet would
 * read as a formula, with a line break. Totals are summed from the lines, as the loader does.
 */
export function timesheetFixture(locale: string): TimesheetModel {
  const web = section('WEB', 'Website relaunch', [
    line('WEB-12', 'Fix <script>alert("x")</script>, "quoted" title', '2026-10-02', 'Anna Schmidt', 'Senior developer', 90),
    line('WEB-12', 'Fix <script>alert("x")</script>, "quoted" title', '2026-10-20', 'Anna Schmidt', 'Senior developer', -15, { correction: true }),
    line('WEB-12', 'Fix <script>alert("x")</script>, "quoted" title', '2026-10-31', 'Ben Okafor', null, 45),
    line('WEB-15', 'Newsletter template', '2026-10-10', 'Anna Schmidt', 'Senior developer', 90, { policy: 'free' }),
  ]);
  const sup = section('SUP', 'Support retainer', [
    line('SUP-3', 'Server maintenance', '2026-10-05', 'Ben Okafor', null, 120, { policy: 'bank', bankName: 'Support 2026' }),
    line('SUP-3', 'Server maintenance', '2026-10-06', 'Chloé Dubois', 'Operations', 60, { policy: 'bank', bankName: 'Support 2026' }),
    line('SUP-4', '=SUM(A1:A2) budget\nreview', '2026-10-15', 'Chloé Dubois', 'Operations', 20),
  ]);
  const sections = [sup, web];
  return {
    number: 'MUS-2026-0007',
    version: 2,
    scope: 'combined',
    agency: { name: 'Nordlicht Digital GmbH' },
    client: { id: 'c0000000-0000-4000-8000-000000000001', name: 'Müller & Söhne AG', code: 'MUS', locale },
    period: { start: '2026-10-01', end: '2026-10-31' },
    issuedOn: '2026-11-02',
    sections,
    totals: totalsOf(sections.flatMap((s) => s.lines)),
    banks: [{ id: 'b0000000-0000-4000-8000-000000000001', name: 'Support 2026', beforeMinutes: 600, drawnMinutes: 180, afterMinutes: 420 }],
  };
}

/** A one-project sheet of `rows` paid lines, one ticket each (so `rows` table rows), for timing. */
export function largeTimesheet(rows: number, locale = 'en-US'): TimesheetModel {
  const people = ['Anna Schmidt', 'Ben Okafor', 'Chloé Dubois', 'David Lee'];
  const lines = Array.from({ length: rows }, (_, i) =>
    line(
      `WEB-${100 + i}`,
      `Ticket ${100 + i}: a task of some length`,
      `2026-10-${String(1 + (i % 28)).padStart(2, '0')}`,
      people[i % 4]!,
      null,
      15 + (i % 7) * 15,
    ),
  );
  const web = section('WEB', 'Website relaunch', lines);
  return { ...timesheetFixture(locale), sections: [web], totals: web.totals, banks: [] };
}

let entries = 0;

function line(
  humanId: string,
  text: string,
  spentOn: string,
  person: string,
  category: string | null,
  minutes: number,
  extra: { policy?: LinePolicy; bankName?: string; correction?: boolean } = {},
): TimesheetLine {
  entries += 1;
  return {
    entryId: `e0000000-0000-4000-8000-${String(entries).padStart(12, '0')}`,
    ticketId: `t-${humanId}`,
    humanId,
    text,
    spentOn,
    person,
    category,
    minutes,
    policy: extra.policy ?? 'paid',
    bankName: extra.bankName ?? null,
    correction: extra.correction ?? false,
  };
}

function section(key: string, name: string, lines: TimesheetLine[]): TimesheetSection {
  return { project: { id: `p-${key}`, key, name }, lines, totals: totalsOf(lines) };
}

function totalsOf(lines: TimesheetLine[]): TimesheetTotals {
  const sum = (p: (l: TimesheetLine) => boolean) => lines.filter(p).reduce((n, l) => n + l.minutes, 0);
  return {
    minutes: sum(() => true),
    chargedMinutes: sum((l) => l.policy === 'paid'),
    freeMinutes: sum((l) => l.policy === 'free'),
    bankMinutes: sum((l) => l.policy === 'bank'),
  };
}
