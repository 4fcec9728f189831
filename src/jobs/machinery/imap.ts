import { ImapFlow, type SearchObject } from 'imapflow';
import type { JobCtx } from '../../core/jobs/ctx.ts';
import {
  CONNECT_FAILED,
  HOST_REFUSED,
  LOGIN_REFUSED,
  type ConnectImap,
  type ImapAccount,
  type ImapQuery,
  type ImapSession,
} from '../../core/mail/intake/imap.ts';
import { createOutboundGuard, HostNotAllowed } from '../../core/net/outbound.ts';

/** Without a configured guard, the strict rule (loopback refused too). */
const strictGuard = createOutboundGuard({ allowLoopback: false });

/**
 * A logged-in IMAP client of a mailbox, connected through the outbound guard, which is asked again
 * now (the name may resolve elsewhere since the settings were saved): the connection goes to the
 * exact address checked, the name kept for TLS SNI and the certificate check. Errors thrown are
 * generic so `lastError` cannot map the network (refused, closed, filtered and non-IMAP ports all
 * read alike); the cause is in the server's log.
 */
export const connectImap: ConnectImap = async (ctx, mb, password) => sessionOf(await loginImap(ctx, mb, password));

async function loginImap(ctx: Pick<JobCtx, 'outbound' | 'log'>, mb: ImapAccount, password: string): Promise<ImapFlow> {
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

function searchOf(query: ImapQuery): SearchObject {
  if (query.kind === 'unseen') return { seen: false };
  if (query.kind === 'unseenOrSince') return { or: [{ seen: false }, { since: query.since }] };
  return { uid: `${query.uid}:*` };
}

/**
 * The core's session over an imapflow client. imapflow deadlocks when a command runs inside a
 * fetch iterator; the poll collects each fetch before acting, which is the rule it keeps.
 */
function sessionOf(client: ImapFlow): ImapSession {
  return {
    createFolder: async (path) => {
      await client.mailboxCreate(path);
    },
    openFolder: async (path) => {
      const lock = await client.getMailboxLock(path);
      const folder = client.mailbox;
      if (!folder) {
        lock.release();
        throw new Error(`folder ${path} is not open`);
      }
      return { uidValidity: String(folder.uidValidity), uidNext: folder.uidNext, release: () => lock.release() };
    },
    search: async (query) => (await client.search(searchOf(query), { uid: true })) || [],
    fetchMeta: async function* (uids) {
      for await (const m of client.fetch(uids, { uid: true, size: true, internalDate: true }, { uid: true })) {
        const at = m.internalDate ? new Date(m.internalDate) : null;
        yield { uid: m.uid, size: m.size ?? 0, internalDate: at && !Number.isNaN(at.getTime()) ? at : null };
      }
    },
    fetchBytes: async function* (uids, part) {
      const query = part === 'source' ? { source: true } : { headers: true };
      for await (const m of client.fetch(uids, { uid: true, ...query }, { uid: true })) {
        yield { uid: m.uid, source: m.source ?? null, headers: m.headers ?? null };
      }
    },
    markSeen: async (uid) => {
      await client.messageFlagsAdd(String(uid), ['\\Seen'], { uid: true });
    },
    move: async (uid, to) => {
      await client.messageMove(String(uid), to, { uid: true });
    },
    logout: () => client.logout().catch(() => client.close()),
  };
}
