/**
 * Everything a timesheet document shows, loaded once (src/core/documents/load-timesheet.ts) and
 * rendered to html, csv and pdf by pure functions (src/core/documents/render/). Figures are
 * minutes; dates are `YYYY-MM-DD`; formatting for the client's locale happens in the renderers.
 */
export interface TimesheetModel {
  number: string;
  version: number;
  scope: 'combined' | 'project';
  /** The agency: the workspace. */
  agency: { name: string };
  client: { id: string; name: string; code: string; locale: string };
  period: { start: string; end: string };
  /** The day the run was started (UTC), shown as the document date. */
  issuedOn: string;
  /** One section per project, by project key (a project-scope timesheet has one). */
  sections: TimesheetSection[];
  totals: TimesheetTotals;
  /** Banks drawn down by this timesheet's lines: balance before this run, drawn here, after. */
  banks: TimesheetBank[];
}

export interface TimesheetSection {
  project: { id: string; key: string; name: string };
  /** One line per time entry, ordered by ticket number, date, person. */
  lines: TimesheetLine[];
  totals: TimesheetTotals;
}

export type LinePolicy = 'paid' | 'free' | 'bank';

export interface TimesheetLine {
  entryId: string;
  ticketId: string;
  humanId: string;
  /** What the client reads: the ticket's billingDescription, else its title. */
  text: string;
  spentOn: string;
  person: string;
  category: string | null;
  /** Signed: a correction is negative. */
  minutes: number;
  policy: LinePolicy;
  /** The bank drawn on, for a `bank` line. */
  bankName: string | null;
  /** True for a correction entry (its own signed line). */
  correction: boolean;
}

export interface TimesheetTotals {
  /** Every line's minutes. */
  minutes: number;
  /** Minutes charged: `paid` lines. */
  chargedMinutes: number;
  /** Minutes of `free` lines (listed at zero). */
  freeMinutes: number;
  /** Minutes drawn from banks. */
  bankMinutes: number;
}

export interface TimesheetBank {
  id: string;
  name: string;
  /** Balance before this run (deposits minus the live draw-downs of earlier runs). */
  beforeMinutes: number;
  /** Drawn by this timesheet's lines. */
  drawnMinutes: number;
  afterMinutes: number;
}

/** The formats a timesheet is rendered in; pdf only where a renderer (Chromium) is installed. */
export type DocumentFormat = 'html' | 'csv' | 'pdf';

export const CONTENT_TYPES: Record<DocumentFormat, string> = {
  html: 'text/html; charset=utf-8',
  pdf: 'application/pdf',
  csv: 'text/csv; charset=utf-8',
};
