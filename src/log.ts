import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * Defense in depth: no code logs credentials on purpose (test/secrets-log.test.ts checks it),
 * but should a request, its headers or an input object ever reach a log line, these fields are
 * censored. Paths are pino's (fast-redact): `*` is one level of any key.
 */
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-csrf-token"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'headers["x-csrf-token"]',
  '*.headers.authorization',
  '*.headers.cookie',
  '*.headers["x-csrf-token"]',
  'password',
  '*.password',
  'token',
  '*.token',
  'secret',
  '*.secret',
  'csrfToken',
  '*.csrfToken',
  // postgres.js attaches a failed statement's parameters to its error (a password hash, a token hash)
  'err.parameters',
  '*.err.parameters',
];

/**
 * JSON logs to stdout; to stderr (`true`) where stdout carries a protocol (wt mcp); or to a given
 * stream (tests capture the output).
 */
export function makeLogger(level: string = 'info', to: boolean | DestinationStream = false): Logger {
  const options = { level, base: undefined, redact: { paths: REDACT, censor: '[redacted]' } };
  if (to === true) return pino(options, pino.destination(2));
  if (to) return pino(options, to);
  return pino(options);
}
