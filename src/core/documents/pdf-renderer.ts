import { labelsFor } from './render/labels.ts';
import { resolveLocale } from './render/format.ts';
import type { TimesheetModel } from './timesheet-model.ts';

/**
 * Prints a self-contained html document to pdf (playwright-core driving Debian's chromium; see
 * src/jobs/machinery/pdf.ts, the worker's side). One browser per worker process, reused, with a
 * few warm pages: a document replaces the previous one's content whole, and cannot fetch or run anything.
 */
export interface PdfRenderer {
  /** A4 pdf bytes of `html`, with `footer` (when given) at the foot of every page. */
  render(html: string, footer?: PdfFooter): Promise<Uint8Array>;
  close(): Promise<void>;
}

/**
 * The words at the foot of every printed page, decided here (they are part of the document);
 * the printer lays them out. Plain text: in `end`, `{page}` stands for the page's number and
 * `{pages}` for the document's page count, filled in by the printer once the pages are known.
 */
export interface PdfFooter {
  start: string;
  end: string;
}

/** A timesheet's footer: its title and number on the left, "Page 1 of 3" in its language on the right. */
export function timesheetFooter(model: TimesheetModel): PdfFooter {
  const l = labelsFor(resolveLocale(model.client.locale));
  return { start: `${l.title} ${model.number}`, end: l.pageOf };
}
