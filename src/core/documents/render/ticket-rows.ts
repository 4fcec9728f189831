import type { LinePolicy, TimesheetLine } from '../timesheet-model.ts';

/** One row of the html timesheet: a ticket's lines that are billed the same way. */
export interface TicketRow {
  humanId: string;
  text: string;
  policy: LinePolicy;
  bankName: string | null;
  correction: boolean;
  firstDate: string;
  lastDate: string;
  /** Distinct names, sorted for the client's locale. */
  people: string[];
  minutes: number;
  /** What is charged: the minutes of a `paid` row, zero for `free` and `bank` rows. */
  chargedMinutes: number;
  /** The sum of the lines' rounded amounts (minor units); 0 on an hours-only document. */
  amountMinor: number;
  /** What the row's minutes cost at their rates (free and bank rows: what they would have cost); 0 on an hours-only document. */
  listAmountMinor: number;
}

/**
 * Folds a section's entry lines (ordered by ticket, date, person) into rows a client reads: one
 * per ticket, split only where its lines are billed differently (a free, a bank or a correction
 * line carried from another run), so the hours a row shows always have one meaning.
 */
export function ticketRows(lines: TimesheetLine[], locale: string): TicketRow[] {
  const rows = new Map<string, TicketRow>();
  const people = new Map<string, Set<string>>();
  for (const line of lines) {
    const key = JSON.stringify([line.ticketId, line.policy, line.bankName, line.correction]);
    let row = rows.get(key);
    if (!row) {
      row = {
        humanId: line.humanId,
        text: line.text,
        policy: line.policy,
        bankName: line.bankName,
        correction: line.correction,
        firstDate: line.spentOn,
        lastDate: line.spentOn,
        people: [],
        minutes: 0,
        chargedMinutes: 0,
        amountMinor: 0,
        listAmountMinor: 0,
      };
      rows.set(key, row);
      people.set(key, new Set());
    }
    if (line.spentOn < row.firstDate) row.firstDate = line.spentOn;
    if (line.spentOn > row.lastDate) row.lastDate = line.spentOn;
    people.get(key)!.add(line.person);
    row.minutes += line.minutes;
    if (line.policy === 'paid') row.chargedMinutes += line.minutes;
    row.amountMinor += line.amountMinor ?? 0;
    row.listAmountMinor += line.listAmountMinor ?? 0;
  }
  const collator = new Intl.Collator(locale);
  for (const [key, row] of rows) row.people = [...people.get(key)!].sort(collator.compare);
  return [...rows.values()];
}
