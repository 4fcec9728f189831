import { randomBytes } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { SMTPServer } from 'smtp-server';
import type { Logger } from '../../log.ts';

export interface Outbox {
  /** `smtp://127.0.0.1:<port>`: what the mailer sends to. */
  url: string;
  /** The absolute folder the messages are written to. */
  dir: string;
  close(): Promise<void>;
}

/** Larger messages are refused (552): the outbox is a local folder, not a store for anything sent to the port. */
const MAX_MESSAGE_BYTES = 50 * 1024 * 1024;

/** Which workspace sent a message, by its Message-ID (src/core/mail/outgoing.ts); null when none did. */
export type WorkspaceOfMessage = (messageId: string) => Promise<string | null>;

/**
 * The embedded default's mail server: a catch-all SMTP server on loopback that accepts any
 * sender and recipient without authentication and writes each message, as received, to
 * `<dir>/<workspace id>/<ISO time>-<random>.eml` (with `Return-Path` and `Delivered-To` lines from
 * the envelope, as a mailbox would, so a Bcc recipient is visible), so deliveries are really sent
 * and can be opened in any mail reader. The workspace is the one `workspaceOf` finds for the
 * message's Message-ID, so each workspace's console reads its own folder only; a message no
 * workspace sent stays in `<dir>` itself, shown to no one. Port 0 takes any free port.
 */
export async function startOutbox(opts: { dir: string; port?: number; log?: Logger; workspaceOf?: WorkspaceOfMessage }): Promise<Outbox> {
  const dir = resolve(opts.dir);
  await mkdir(dir, { recursive: true });
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: MAX_MESSAGE_BYTES,
    rejectOversized: true,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (stream.sizeExceeded) return callback();
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        const envelope = [`Return-Path: <${from}>`, ...session.envelope.rcptTo.map((r) => `Delivered-To: ${r.address}`)].join('\r\n');
        const message = Buffer.concat(chunks);
        folderOf(dir, message, opts.workspaceOf)
          .then((folder) => store(folder, Buffer.concat([Buffer.from(`${envelope}\r\n`), message])))
          .then(
            (file) => {
              opts.log?.debug({ file }, 'outbox: message stored');
              callback(null, `Stored as ${file}`);
            },
            (err: Error) => {
              opts.log?.error({ err }, 'outbox: message not stored');
              callback(Object.assign(new Error('Cannot store the message now'), { responseCode: 451 }));
            },
          );
      });
    },
  });
  server.on('error', (err) => opts.log?.warn({ err }, 'outbox: connection error'));
  await new Promise<void>((ok, fail) => {
    server.server.once('error', fail);
    server.listen(opts.port ?? 0, '127.0.0.1', () => ok());
  });
  const { port } = server.server.address() as AddressInfo;
  return { url: `smtp://127.0.0.1:${port}`, dir, close: () => new Promise<void>((ok) => server.close(() => ok())) };
}

/** The message's folder: its workspace's, or the outbox's own for a message no workspace sent. */
async function folderOf(dir: string, message: Buffer, workspaceOf: WorkspaceOfMessage | undefined): Promise<string> {
  const messageId = workspaceOf && headerValue(message, 'message-id');
  const workspaceId = messageId ? await workspaceOf(messageId) : null;
  if (!workspaceId) return dir;
  const folder = join(dir, workspaceId);
  await mkdir(folder, { recursive: true });
  return folder;
}

/** One header's value from the message's header block (folded lines joined), or null. */
export function headerValue(message: Buffer, name: string): string | null {
  const end = message.indexOf('\r\n\r\n');
  const block = message.subarray(0, end < 0 ? message.length : end).toString('latin1');
  const unfolded = block.replace(/\r?\n[ \t]+/g, ' ');
  const prefix = `${name.toLowerCase()}:`;
  const line = unfolded.split(/\r?\n/).find((l) => l.toLowerCase().startsWith(prefix));
  return line ? line.slice(prefix.length).trim() || null : null;
}

/** Written under a temporary name and renamed, so a reader of the folder never sees half a message. */
async function store(dir: string, bytes: Buffer): Promise<string> {
  // Colons would make the name unusable on some file systems; the name still sorts by time.
  const name = `${new Date().toISOString().replace(/:/g, '-')}-${randomBytes(4).toString('hex')}.eml`;
  const tmp = join(dir, `.${name}.tmp`);
  await writeFile(tmp, bytes);
  await rename(tmp, join(dir, name));
  return name;
}
