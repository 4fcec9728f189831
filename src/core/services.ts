import type { Config } from '../config.ts';
import type { Db } from '../db/connect.ts';
import type { Logger } from '../log.ts';
import type { LoginGuard } from './auth/login-guard.ts';
import type { TokenVerifier } from './auth/token-verifier.ts';
import type { Caches } from './cache.ts';
import type { MailboxMachinery } from './mail/machinery.ts';
import type { TokenLimits } from './limits/token-limits.ts';

/**
 * What the process gives every adapter (REST, MCP over HTTP and stdio, the CLI, later the
 * console): built once in main and in tests, so no adapter defines it for another.
 */
export interface Services {
  sql: Db;
  config: Config;
  log: Logger;
  verifier: TokenVerifier;
  caches?: Caches;
  /** Failed-login throttling; absent: no throttling (one-off tools). */
  loginGuard?: LoginGuard;
  /** Requests per token and minute; absent: not limited (one-off tools). */
  limits?: TokenLimits;
  now?: () => Date;
  /** Certificate authorities trusted for outbound HTTPS besides the system's (tests' self-signed loopback servers: OAuth client metadata documents). */
  outboundCa?: string;
  /** Sealing key and outbound guard for mailbox settings (PUT /mailbox); absent: a door that writes one fails loudly. */
  mailbox?: MailboxMachinery;
}
