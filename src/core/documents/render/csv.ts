import type { TimesheetLine, TimesheetModel } from '../timesheet-model.ts';
import { minorToDecimal } from '../../rates/money.ts';
import { plainHours } from './format.ts';

/**
 * The timesheet for machines: RFC 4180 (comma, CRLF, a header row), UTF-8 without a byte order
 * mark, one row per time entry, numbers never localised (`1.50`), dates ISO. Written by hand:
 * writing RFC 4180 is one quoting rule, which a dependency would not make safer.
 * A priced document (issue 23) has four more columns at the end: currency, the hourly rate, what
 * the minutes cost at it (list_amount) and what is charged (amount), plain decimals in the
 * currency's digits (`95.00`; JPY `700`); an hours-only document keeps the twelve columns.
 */
export function renderCsv(model: TimesheetModel): string {
  const currency = model.currency ?? null;
  const money = (minor: number | null | undefined) => (currency && minor !== null && minor !== undefined ? minorToDecimal(minor, currency) : '');
  const rows: string[][] = [currency ? [...HEADER, ...MONEY_HEADER] : HEADER];
  for (const section of model.sections) {
    for (const line of section.lines) {
      rows.push([
        model.number,
        text(model.client.name),
        text(section.project.key),
        text(line.humanId),
        text(line.text),
        line.spentOn,
        text(line.person),
        text(line.category ?? ''),
        String(line.minutes),
        plainHours(line.minutes),
        String(line.policy === 'paid'),
        text(policyOf(line)),
        ...(currency ? [currency, money(line.rateMinor), money(line.listAmountMinor), money(line.amountMinor)] : []),
      ]);
    }
  }
  return rows.map((r) => r.map(field).join(',') + '\r\n').join('');
}

const MONEY_HEADER = ['currency', 'rate', 'list_amount', 'amount'];
const HEADER = ['number', 'client', 'project', 'ticket', 'text', 'date', 'person', 'category', 'minutes', 'hours', 'billable', 'policy'];

/** `paid`, `free` or `bank:<bank name>`: the name, not the id, because the client knows its banks by name. */
function policyOf(line: TimesheetLine): string {
  return line.policy === 'bank' ? `bank:${line.bankName ?? ''}` : line.policy;
}

/** RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled. */
function field(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/**
 * A text that a spreadsheet would read as a formula (`=`, `+`, `-`, `@`, tab, CR first) gets a
 * leading apostrophe (OWASP's advice against csv injection): ticket titles come from anyone,
 * email included, and the client opens this file in a spreadsheet. Numbers are not text here.
 */
function text(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}
