/**
 * The headers every file download carries (documents and attachments alike): never cached, never
 * sniffed, and a CSP that lets a document's inline styles apply but nothing load or run.
 */
export const SAFE_FILE_HEADERS = {
  'Cache-Control': 'private, no-store',
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
} as const;
