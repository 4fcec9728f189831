import { pino, type Logger } from 'pino';

export type { Logger };

/** JSON logs to stdout, or to stderr (`toStderr`) where stdout carries a protocol (wt mcp). */
export function makeLogger(level: string = process.env.LOG_LEVEL ?? 'info', toStderr = false): Logger {
  const options = { level, base: undefined, redact: ['req.headers.authorization', 'req.headers.cookie'] };
  return toStderr ? pino(options, pino.destination(2)) : pino(options);
}
