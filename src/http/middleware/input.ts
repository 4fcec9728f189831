import type { Context, Middleware } from 'koa';
import { AppError, invalid } from '../../core/errors.ts';
import { assertCleanInput } from '../../core/input.ts';

/**
 * The one check of transport input that no operation may receive (src/core/input.ts): a NUL or a
 * lone UTF-16 surrogate anywhere in the path, the query string or the parsed body, or JSON nested
 * too deep, is 400 `invalid` (`invalid_characters` / `too_deep`, with `field`) before any route
 * runs, so nothing is written. Body and query fields are named as zod names them (`title`,
 * `stateIds.0`); the path is `path`. Routes that parse a body of their own (multipart uploads)
 * run it again after their parser.
 */
export const cleanInput: Middleware = async (ctx, next) => {
  assertCleanInput(decodedPath(ctx.path), 'path');
  assertCleanInput(ctx.query);
  if (ctx.request.body !== undefined) assertCleanInput(ctx.request.body);
  await next();
};

/**
 * The path as the router decodes its parameters: each run of escapes decoded on its own, so one
 * malformed escape (`%`, `%zz`, `%ff`) cannot hide a NUL elsewhere; a `%00` inside a run that does
 * not decode is kept as the NUL it names.
 */
function decodedPath(path: string): string {
  return path.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run.replace(/%00/g, '\u0000');
    }
  });
}

/** The content codings the body parser inflates (RFC 9110 names; compared case-insensitively). */
const SUPPORTED_ENCODINGS = new Set(['identity', 'gzip', 'deflate', 'br']);

/**
 * A body in a content coding we cannot inflate is 415 `unsupported_encoding`. The header is
 * normalised to lower case because the inflater compares it exactly (`GZIP` would be refused).
 */
export function assertSupportedEncoding(ctx: Context): void {
  const raw = ctx.get('content-encoding');
  if (raw === '') return;
  const coding = raw.trim().toLowerCase();
  if (!SUPPORTED_ENCODINGS.has(coding)) {
    throw new AppError('unsupported_media_type', 'Send the body uncompressed, or with Content-Encoding gzip, deflate or br.', {
      reason: 'unsupported_encoding',
      encoding: raw.slice(0, 40),
    });
  }
  ctx.req.headers['content-encoding'] = coding;
}

/**
 * The body parser's failures in the envelope's terms. A failure with no HTTP status while a
 * content coding is declared comes from the inflater (zlib or brotli: the bytes are not what
 * the header says): 400 `bad_encoding`. HTTP errors (size, JSON syntax) pass on to the envelope.
 */
export function bodyParseError(err: Error & { status?: unknown }, ctx: Context): Error {
  const coding = ctx.get('content-encoding');
  if (err.status === undefined && coding !== '' && coding !== 'identity') {
    return invalid('bad_encoding', undefined, `The body is not valid ${coding} data.`);
  }
  return err;
}
