/**
 * Everything a timesheet document shows, loaded once (src/core/documents/load-timesheet.ts) and
 * rendered to html, csv and pdf by pure functions (src/core/documents/render/). Figures are
 * minutes; dates are `YYYY-MM-DD`; formatting for the client's locale happens in the renderers.
 */
export interface TimesheetModel {
  number: string;
  version: number;
  scope: 'combined' | 'project';
  /**
   * The agency: the workspace. Its legal name, address, tax id and logo (issue 23) as fixed on
   * the timesheet at allocation; absent on a timesheet made before them or a workspace without them.
   */
  agency: { name: string; legalName?: string; address?: string; taxId?: string; logo?: DocumentLogo };
  /** The client; its billing address and tax id (issue 23) as fixed at allocation, when it has them. */
  client: { id: string; name: string; code: string; locale: string; billingAddress?: string; taxId?: string };
  /** The agency's bank details printed under the total (issue 23), when the workspace has any. */
  bank?: { accountHolder: string | null; iban: string | null; bic: string | null; details: string | null };
  /** The run's purchase-order number (issue 23), when the operator gave one. */
  poNumber?: string;
  /** `entry`: a row per time entry (the client's option, fixed at allocation); absent or `ticket`: a row per ticket. */
  lineLayout?: 'ticket' | 'entry';
  /** The voided number this document replaces (issue 23), when it replaces one. */
  replacesNumber?: string;
  /**
   * ISO 4217 currency of the amounts (issue 23), fixed on the run's lines at allocation; null or
   * absent: an hours-only document (a workspace without rates, or a run made before them).
   */
  currency?: string | null;
  /** The client's tax and terms as fixed at allocation (issue 23); shown on a priced document. */
  tax?: { rateBasisPoints: number; label: string | null; note: string | null };
  /** `YYYY-MM-DD`: the document date plus the client's payment terms; null: no terms. */
  dueOn?: string | null;
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
  /** Minor units per hour the line was billed at; null: no rate (billed at zero by the operator's choice) or an hours-only document. */
  rateMinor?: number | null;
  /** What the minutes cost at the rate, rounded once (free and bank lines too: what they would have cost). */
  listAmountMinor?: number | null;
  /** What the line charges: its list amount when paid, 0 for free and bank time; null on an hours-only document. */
  amountMinor?: number | null;
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
  /** The sum of the lines' rounded amounts (minor units); absent on an hours-only document. */
  amountMinor?: number;
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

/** An image embedded in the document as a data: URI (never fetched): PNG or JPEG, checked by its bytes when uploaded. */
export interface DocumentLogo {
  contentType: 'image/png' | 'image/jpeg';
  base64: string;
}

/** The formats a timesheet is rendered in; pdf only where a renderer (Chromium) is installed. */
export type DocumentFormat = 'html' | 'csv' | 'pdf';

export const CONTENT_TYPES: Record<DocumentFormat, string> = {
  html: 'text/html; charset=utf-8',
  pdf: 'application/pdf',
  csv: 'text/csv; charset=utf-8',
};
