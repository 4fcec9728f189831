import { invalid } from '../errors.ts';

/** The largest logo a workspace may store (decoded bytes): it is embedded in every html and pdf document. */
export const LOGO_MAX_BYTES = 256 * 1024;

export type LogoType = 'image/png' | 'image/jpeg';

/**
 * The image type by the file's own first bytes (its magic number), never by a name or a declared
 * type: PNG's 8-byte signature, JPEG's SOI marker followed by a marker byte. Anything else is null.
 */
export function logoType(bytes: Uint8Array): LogoType | null {
  const png = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (bytes.length > png.length && png.every((b, i) => bytes[i] === b)) return 'image/png';
  if (bytes.length > 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  return null;
}

/**
 * A logo sent as base64 (PATCH /settings `logo`): decoded strictly (a character outside the
 * alphabet is refused rather than skipped, as Buffer.from would), at most LOGO_MAX_BYTES, and a PNG
 * or a JPEG by its magic bytes. 400 `bad_logo` or `logo_too_large`.
 */
export function readLogo(base64: string): { contentType: LogoType; content: Buffer } {
  const text = base64.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0 || text.length === 0) {
    throw invalid('bad_logo', { field: 'logo' }, 'logo must be a PNG or JPEG file, base64-encoded.');
  }
  const content = Buffer.from(text, 'base64');
  if (content.length > LOGO_MAX_BYTES) {
    throw invalid('logo_too_large', { field: 'logo', maxBytes: LOGO_MAX_BYTES }, `The logo may be at most ${LOGO_MAX_BYTES / 1024} KiB.`);
  }
  const contentType = logoType(content);
  if (!contentType) throw invalid('bad_logo', { field: 'logo' }, 'logo must be a PNG or JPEG file (read by its first bytes).');
  return { contentType, content };
}
