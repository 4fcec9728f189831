/**
 * Prints a self-contained html document to pdf (playwright-core driving Debian's chromium; see
 * src/jobs/machinery/pdf.ts, the worker's side). One browser per worker process, reused; a fresh context per document.
 */
export interface PdfRenderer {
  /** A4 pdf bytes of `html`. */
  render(html: string): Promise<Uint8Array>;
  close(): Promise<void>;
}
