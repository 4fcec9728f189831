import { ImapFlow } from 'imapflow';
import type { JobCtx } from '../../jobs/ctx.ts';
import { createOutboundGuard, HostNotAllowed } from '../../net/outbound.ts';

/** Without a configured guard, the strict rule (loopback refused too). */
const strictGuard = createOutboundGuard({ allowLoopback: false });

/** What the mailbox's `lastError` says when connecting failed: the same for a refused, closed, filtered or silent port. */
export const CONNECT_FAILED = 'could not connect to the mail server';
export const HOST_REFUSED = 'the mail server host is not allowed (loopback, private, link-local or metadata address)';
export const LOGIN_REFUSED = 'AUTHENTICATIONFAILED: the mail server refused the login';

export interface ImapAccount {
  id: string;
  host: string;
  port: number;
  secure: boolean;
  username: string;
}

/**
 * A logged-in IMAP client of a mailbox, connected through the outbound guard, which is asked again
 * now (the name may resolve elsewhere since the settings were saved): the connection goes to the
 * exact address checked, the name kept for TLS SNI and the certificate check. Errors thrown are
 * generic so `lastError` cannot map the network (refused, closed, filtered and non-IMAP ports all
 * read alike); the cause is in the server's log.
 */
export async function connectImap(ctx: Pick<JobCtx, 'outbound' | 'log'>, mb: ImapAccount, password: string): Promise<ImapFlow> {
  let target;
  try {
    target = await (ctx.outbound ?? strictGuard).check(mb.host);
  } catch (err) {
    if (!(err instanceof HostNotAllowed)) throw err;
    ctx.log.warn({ mailboxId: mb.id, host: mb.host, detail: err.detail }, 'mailbox host refused');
    throw new Error(HOST_REFUSED);
  }
  const client = new ImapFlow({
    host: target.address,
    ...(target.servername ? { servername: target.servername } : {}),
    port: mb.port,
    secure: mb.secure,
    auth: { user: mb.username, pass: password },
    // imapflow's own log would carry protocol lines; ours says what happened without them
    logger: false,
    disableAutoIdle: true,
    connectionTimeout: 30_000,
    greetingTimeout: 15_000,
    socketTimeout: 120_000,
  });
  // A socket error is also the failure of the command under way; unheard, it would end the process.
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (err) {
    const e = err as { message?: string; code?: string; serverResponseCode?: string; responseText?: string; authenticationFailed?: boolean };
    ctx.log.warn(
      {
        mailboxId: mb.id,
        address: target.address,
        port: mb.port,
        error: { message: e.message, code: e.code ?? e.serverResponseCode, response: e.responseText },
      },
      'mailbox connection failed',
    );
    client.close();
    // a refused login needs an IMAP server that answered: it tells the admin what to fix and nothing about the network
    throw new Error(e.authenticationFailed ? LOGIN_REFUSED : CONNECT_FAILED);
  }
  return client;
}
