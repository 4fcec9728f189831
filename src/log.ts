import { pino, type Logger } from 'pino';

export type { Logger };

export function makeLogger(level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ level, base: undefined, redact: ['req.headers.authorization', 'req.headers.cookie'] });
}
