import type { OutboundGuard } from '../net/outbound.ts';
import type { SecretBox } from './secret-box.ts';

/**
 * What writing a mailbox's settings needs of the process, built once by the composition root and
 * carried on `Ctx`: the key that seals its password (null: none configured, 503
 * `secret_key_missing`) and the outbound guard its IMAP host must pass.
 */
export interface MailboxMachinery {
  secrets: SecretBox | null;
  outbound: OutboundGuard;
}
