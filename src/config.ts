import { join } from 'node:path';
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
  // Seconds without a heartbeat after which a worker process counts as dead and the jobs it had locked
  // are run again by another (each process beats every sixth of it: 5 s for the default 30).
  WORKER_STALE_SECONDS: z.coerce.number().int().min(3).max(3600).default(30),
  // Days job_history keeps each attempt (the console's throughput, durations and failures); older rows are deleted hourly.
  JOB_HISTORY_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  // Outgoing mail (timesheet deliveries). Without SMTP_URL the worker runs a local catch-all SMTP
  // server on loopback (OUTBOX_PORT, 0 = any free port) writing each message to OUTBOX_DIR
  // (default <DATA_DIR>/outbox) as an .eml file.
  SMTP_URL: z.url({ protocol: /^smtps?$/, error: 'must be smtp://[user:pass@]host[:port] or smtps://...' }).optional(),
  MAIL_FROM: z
    .string()
    .trim()
    .regex(/^([^<>\r\n]*<[^<>\s@]+@[^<>\s@]+>|[^<>\s@]+@[^<>\s@]+)$/, 'must be an address, optionally with a name: Name <user@host>')
    .default('Work tracker <billing@localhost>'),
  OUTBOX_DIR: z.string().min(1).optional(),
  OUTBOX_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  COOKIE_SECURE: z.enum(['auto', 'true', 'false']).default('auto'),
  // The address people reach the service at, for the links in invitation and password-reset emails
  // (never taken from a request's Host header, which anyone can write). Unset: http://HOST:PORT.
  PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  // Host names /mcp accepts besides localhost, the loopback addresses and HOST, comma-separated (DNS rebinding guard).
  MCP_ALLOWED_HOSTS: z.string().optional(),
  // Outbound connections to an address a user gave (a mailbox's IMAP server) may reach loopback
  // (127.0.0.0/8, ::1): a local IMAP server, the tests. Unset: true on the embedded default (no
  // DATABASE_URL), false otherwise. Private, link-local and metadata addresses stay refused whatever it says.
  ALLOW_LOOPBACK_HOSTS: z.enum(['true', 'false']).optional(),
  // The chromium that prints pdf documents; unset: /usr/bin/chromium (or chromium-browser) if installed, else no pdf.
  CHROMIUM_PATH: z.string().min(1).optional(),
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
  // OAuth for MCP (issue 24): lifetimes of the access and refresh tokens the authorization server issues.
  OAUTH_ACCESS_TOKEN_SECONDS: z.coerce.number().int().min(60).max(86_400).default(3600),
  OAUTH_REFRESH_TOKEN_DAYS: z.coerce.number().int().min(1).max(365).default(30),
  // Seals stored secrets (a mailbox password, AES-256-GCM): 64 hex digits or the base64 of 32 bytes.
  // Unset on the embedded default: a key generated once under DATA_DIR (src/core/mail/secret-box.ts).
  WT_SECRET_KEY: z
    .string()
    .regex(/^(?:[0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$/, 'expected 64 hex digits or the base64 of 32 bytes')
    .optional(),
});

export type Config = z.infer<typeof schema>;

export class ConfigError extends Error {}

/** The local outbox's folder (the embedded default's SMTP catcher writes there, the console reads it). */
export const outboxDir = (config: Pick<Config, 'OUTBOX_DIR' | 'DATA_DIR'>) => config.OUTBOX_DIR ?? join(config.DATA_DIR, 'outbox');

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
