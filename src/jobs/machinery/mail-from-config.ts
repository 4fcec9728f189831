import { outboxDir, type Config } from '../../config.ts';
import type { Mailer } from '../../core/mail/mailer.ts';
import { outgoingWorkspace } from '../../core/mail/outgoing.ts';
import type { Db } from '../../db/connect.ts';
import type { Logger } from '../../log.ts';
import { startOutbox, type Outbox } from './outbox-server.ts';
import { SmtpMailer } from './smtp-mailer.ts';

/** The mailer over SMTP_URL, or else over the local outbox server's URL. */
export function createMailer(config: Pick<Config, 'SMTP_URL'>, outboxUrl?: string): SmtpMailer {
  const url = config.SMTP_URL ?? outboxUrl;
  if (!url) throw new Error('No SMTP_URL and no local outbox: nowhere to send mail.');
  return new SmtpMailer(url);
}

/**
 * The worker's mail: over SMTP_URL when set; otherwise (the embedded default) a local catch-all
 * SMTP server is started first and mail really goes to it, ending up as files in the outbox folder,
 * one folder per workspace (found through `sql`: the workspace that recorded the Message-ID).
 */
export async function mailFromConfig(
  config: Pick<Config, 'SMTP_URL' | 'OUTBOX_DIR' | 'OUTBOX_PORT' | 'DATA_DIR'>,
  log: Logger,
  sql?: Db,
): Promise<{ mailer: Mailer; outbox: Outbox | null }> {
  if (config.SMTP_URL) return { mailer: createMailer(config), outbox: null };
  const workspaceOf = sql ? (messageId: string) => outgoingWorkspace(sql, messageId) : undefined;
  const outbox = await startOutbox({ dir: outboxDir(config), port: config.OUTBOX_PORT, log, workspaceOf });
  return { mailer: createMailer(config, outbox.url), outbox };
}
