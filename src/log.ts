import { pino, type DestinationStream, type Logger } from 'pino';
import { PinoPretty } from 'pino-pretty';

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

/** Where log lines go: JSON to stdout (`false`), JSON to stderr (`true`), human-readable lines to stdout, or a given stream. */
export type LogTarget = boolean | 'pretty' | DestinationStream;

/**
 * JSON logs to stdout; to stderr (`true`) where stdout carries a protocol (wt mcp); pretty lines where a person
 * reads stdout on a terminal (src/main.ts decides: the core never looks at the process); or to a
 * given stream (tests capture the output). Pretty is pino-pretty run in this thread (`sync`), so a
 * log line and the start-up banner's console.log lines come out in the order they were written.
 */
export function makeLogger(level: string = 'info', to: LogTarget = false): Logger {
  const options = { level, base: undefined, redact: { paths: REDACT, censor: '[redacted]' } };
  if (to === true) return pino(options, pino.destination(2));
  if (to === 'pretty') return pino(options, PinoPretty({ sync: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' }));
  if (to) return pino(options, to);
  return pino(options);
}
