import contentDisposition from 'content-disposition';

/**
 * The headers every file download carries (documents and attachments alike): never cached, never
 * sniffed, and a CSP that lets a document's inline styles apply but nothing load or run.
 */
export const SAFE_FILE_HEADERS = {
  'Cache-Control': 'private, no-store',
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
} as const;

/** A file as the core hands it out: its type, whether it opens in the browser, and its name (null: none sent). */
export interface FileDescription {
  contentType: string;
  disposition: 'inline' | 'attachment';
  filename: string | null;
}

/**
 * The headers of a file download: its type, its disposition with an RFC 6266 filename (an ASCII
 * fallback name, and the exact name as RFC 5987 `filename*` whenever it differs), and the safe file headers.
 */
export function fileHeaders(file: FileDescription): Record<string, string> {
  const disposition =
    file.filename === null
      ? file.disposition
      : contentDisposition(file.filename, { type: file.disposition, fallback: file.filename.replace(/[^\x20-\x7e]/g, '_') });
  return { 'Content-Type': file.contentType, 'Content-Disposition': disposition, ...SAFE_FILE_HEADERS };
}
