import { z } from 'zod';

/** Environment settings, validated once at start; a bad value stops the process with one clear line. */
const schema = z.object({
  DATABASE_URL: z.url().optional(),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATA_DIR: z.string().min(1).default('.data'),
  EMBEDDED_PG_PORT: z.coerce.number().int().min(1024).max(65535).default(54329),
  SESSION_TTL_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 90)
    .default(24 * 14),
  TOKEN_CACHE_SECONDS: z.coerce.number().min(0).max(60).default(5),
  WORKER: z.enum(['on', 'off']).default('on'),
  COOKIE_SECURE: z.enum(['auto', 'true', 'false']).default('auto'),
  // Per API token and minute, counted in PostgreSQL across processes; GET/HEAD are reads, the rest writes.
  RATE_LIMIT_READS_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(600),
  RATE_LIMIT_WRITES_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(120),
  // Failed logins and re-authentications before 429, per email and per client address, within the window.
  LOGIN_MAX_FAILURES_PER_EMAIL: z.coerce.number().int().min(1).max(1_000_000).default(10),
  LOGIN_MAX_FAILURES_PER_ADDRESS: z.coerce.number().int().min(1).max(1_000_000).default(50),
  LOGIN_WINDOW_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 3600)
    .default(15 * 60),
});

export type Config = z.infer<typeof schema>;

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== ''));
  const parsed = schema.safeParse(cleaned);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0] ?? 'environment');
    throw new ConfigError(`Invalid environment variable ${name}: ${issue.message}`);
  }
  return parsed.data;
}
