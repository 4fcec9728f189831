import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ImapFlow } from 'imapflow';
import { createOutboundGuard } from '../../src/core/net/outbound.ts';
import { freePort } from '../setup/global.ts';

export const DOVECOT = '/usr/sbin/dovecot';

const FIXTURES = path.join(import.meta.dirname, '../fixtures/mail');

/**
 * A message of test/fixtures/mail as a mail client would deliver it (CRLF line ends), with
 * `{{name}}` placeholders filled in and header lines added or replaced (`{ 'Message-ID': '<x@y>' }`;
 * null removes a header).
 */
export function eml(name: string, opts: { fill?: Record<string, string>; headers?: Record<string, string | null> } = {}): Buffer {
  let text = readFileSync(path.join(FIXTURES, `${name}.eml`), 'utf8').replace(/\r?\n/g, '\r\n');
  for (const [k, v] of Object.entries(opts.fill ?? {})) text = text.replaceAll(`{{${k}}}`, v);
  const split = text.indexOf('\r\n\r\n');
  let head = text.slice(0, split);
  for (const [k, v] of Object.entries(opts.headers ?? {})) {
    const line = new RegExp(`^${k}:.*(?:\\r\\n[ \\t].*)*(?:\\r\\n|$)`, 'im');
    head = line.test(head) ? head.replace(line, v === null ? '' : `${k}: ${v}\r\n`) : v === null ? head : `${k}: ${v}\r\n${head}`;
  }
  return Buffer.from(head.replace(/\r\n$/, '') + text.slice(split));
}

/**
 * The outbound guard with loopback allowed (ALLOW_LOOPBACK_HOSTS=true): what a test's setMailbox and
 * poll need to reach this loopback server. Everything else the guard refuses stays refused.
 */
export const loopbackGuard = createOutboundGuard({ allowLoopback: true });

/** A throw-away IMAP server (Debian's dovecot-imapd) with one mail user, on a loopback port. */
export interface Dovecot {
  host: string;
  port: number;
  user: string;
  password: string;
  /** A connected IMAP client of the test's own, acting as a mail client delivering and reading mail. */
  client: () => Promise<ImapFlow>;
  /** Appends raw messages to a folder (created when missing), as a delivery would; answers their UIDs. */
  deliver: (folder: string, ...messages: (string | Buffer)[]) => Promise<number[]>;
  /** The server's log so far (for a failing test's message). */
  log: () => Promise<string>;
  stop: () => Promise<void>;
}

/** uid and gid of a system user, read from /etc/passwd (Node has no getpwnam). */
function systemUser(name: string): { uid: number; gid: number } | null {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  if (!line) return null;
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * Who dovecot runs the login processes and the mail user as: as root, the `postgres` system user
 * (MACHINE-NOTES: dovecot refuses root for them, and a dedicated user would have to be created);
 * otherwise the current user.
 */
function runAs(): { name: string; uid: number; gid: number } {
  if (process.getuid?.() !== 0) {
    const me = os.userInfo();
    return { name: me.username, uid: me.uid, gid: me.gid };
  }
  const pg = systemUser('postgres');
  if (!pg) throw new Error('running as root, dovecot needs the postgres system user to run as (installed with PostgreSQL)');
  return { name: 'postgres', ...pg };
}

function config(dir: string, port: number, login: string): string {
  return `protocols = imap
listen = 127.0.0.1
base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/dovecot.log
ssl = no
disable_plaintext_auth = no
mail_location = maildir:~/Maildir
first_valid_uid = 1
passdb {
  driver = passwd-file
  args = ${dir}/passwd
}
userdb {
  driver = passwd-file
  args = ${dir}/passwd
}
service imap-login {
  inet_listener imap {
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
  chroot =
}
service anvil {
  chroot =
}
default_login_user = ${login}
default_internal_user = ${login}
`;
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/**
 * Starts dovecot in the foreground with a config, password file and maildir in a temp folder.
 * Throws when dovecot is not installed: tests that need it fail, never skip (.ci/run installs it).
 */
export async function startDovecot(): Promise<Dovecot> {
  if (!existsSync(DOVECOT)) throw new Error(`${DOVECOT} is missing: install dovecot-imapd (.ci/run does)`);
  const who = runAs();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'wt-dovecot-'));
  const home = path.join(dir, 'home');
  for (const sub of ['run', 'state', 'home']) await mkdir(path.join(dir, sub));
  await chmod(dir, 0o755);
  for (const sub of ['run', 'state', 'home']) await chown(path.join(dir, sub), who.uid, who.gid);
  const user = 'intake';
  const password = `imap-${Math.random().toString(36).slice(2)}-pw`;
  await writeFile(path.join(dir, 'passwd'), `${user}:{PLAIN}${password}:${who.uid}:${who.gid}::${home}\n`);
  const port = await freePort();
  await writeFile(path.join(dir, 'dovecot.conf'), config(dir, port, who.name));

  const child: ChildProcess = spawn(DOVECOT, ['-F', '-c', path.join(dir, 'dovecot.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const log = () => readFile(path.join(dir, 'dovecot.log'), 'utf8').catch(() => '');

  const deadline = Date.now() + 10_000;
  while (!(await canConnect(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`dovecot did not start on port ${port}: ${output}\n${await log()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }

  const client = async () => {
    const c = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user, pass: password }, logger: false });
    await c.connect();
    return c;
  };
  const deliver = async (folder: string, ...messages: (string | Buffer)[]) => {
    const c = await client();
    try {
      if (folder !== 'INBOX') await c.mailboxCreate(folder).catch(() => undefined);
      const uids: number[] = [];
      for (const m of messages) {
        const res = await c.append(folder, m);
        if (!res || res.uid === undefined) throw new Error('APPEND answered no UID (UIDPLUS)');
        uids.push(res.uid);
      }
      return uids;
    } finally {
      await c.logout();
    }
  };
  return {
    host: '127.0.0.1',
    port,
    user,
    password,
    client,
    deliver,
    log,
    stop: async () => {
      process.off('exit', killOnExit);
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
