import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorPrincipal } from '../src/core/auth/operator.ts';
import { makeCtx, type Ctx } from '../src/core/ctx.ts';
import type { JobCtx } from '../src/core/jobs/ctx.ts';
import { CONNECT_FAILED, HOST_REFUSED } from '../src/core/mail/intake/imap.ts';
import { pollMailbox } from '../src/core/mail/intake/poll.ts';
import { connectImap } from '../src/jobs/machinery/imap.ts';
import { setMailbox } from '../src/core/mail/intake/settings.ts';
import { runOp } from '../src/core/operation.ts';
import { SecretBox } from '../src/core/mail/secret-box.ts';
import { createOutboundGuard, type OutboundGuard } from '../src/core/net/outbound.ts';
import { isAppError } from '../src/core/errors.ts';
import { makeLogger } from '../src/log.ts';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { eml, loopbackGuard, startDovecot, type Dovecot } from './helpers/dovecot.ts';
import { makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { cleanEnv, runToEnd } from './helpers/spawn.ts';
import { freePort } from './setup/global.ts';

// Issue 19, defect 8: the mailbox host is no port scanner. PUT /mailbox (and `wt mailbox set`)
// refuses loopback, private, link-local and metadata hosts; the poll checks again when it connects,
// connects to the address it checked, and its lastError does not tell one closed port from another.

const KEY = randomBytes(32).toString('hex');
const box = new SecretBox(Buffer.from(KEY, 'hex'));
const lines: string[] = [];
const capture = { write: (chunk: string) => void lines.push(chunk) };

let strictApp: TestApp;
let app: TestApp;
let imap: Dovecot;
let ws: Workspace;
let owner: Person;

beforeAll(async () => {
  [app, imap] = await Promise.all([startTestApp({ env: { WT_SECRET_KEY: KEY } }), startDovecot()]);
  // a second web process over the same database, configured as production is: no loopback
  strictApp = await startTestApp({ db: app.db, env: { WT_SECRET_KEY: KEY, ALLOW_LOOPBACK_HOSTS: 'false' } });
  ws = await makeWorkspace(app.db.sql);
  owner = await makeUser(app.db.sql, ws, { role: 'owner' });
}, 60_000);
afterAll(async () => {
  await strictApp?.close();
  await app?.close();
  await imap?.stop();
});

const api = (p: string) => `/api/w/${ws.slug}${p}`;
const settings = (host: string) => ({ host, port: 993, secure: true, user: 'probe', password: 'probe-password' });

/** The hosts the issue found accepted. */
const ISSUE_HOSTS = ['169.254.169.254', 'metadata.google.internal', '[fd00:ec2::254]', '0x7f000001', '2130706433', '10.0.0.1', 'localhost'];

describe('PUT /mailbox refuses hosts the service must not connect to', () => {
  let session: SessionCookie;
  beforeAll(async () => {
    session = await login(strictApp, owner.email, owner.password);
  });

  it.each(ISSUE_HOSTS)('%s: 400 invalid host_not_allowed, nothing stored', async (host) => {
    const res = await strictApp.call('PUT', api('/mailbox'), { session, body: settings(host) });
    expect([res.status, res.body.error.code, res.body.error.details]).toEqual([400, 'invalid', { reason: 'host_not_allowed', field: 'host' }]);
    expect((await strictApp.call('GET', api('/mailbox'), { session })).status).toBe(404);
  });

  it('ALLOW_LOOPBACK_HOSTS=true admits loopback only: localhost is stored, metadata and private hosts stay refused', async () => {
    const s = await login(app, owner.email, owner.password);
    for (const host of ['169.254.169.254', 'metadata.google.internal', '[fd00:ec2::254]', '10.0.0.1', '::ffff:10.0.0.1', '100.64.0.1']) {
      const res = await app.call('PUT', api('/mailbox'), { session: s, body: settings(host) });
      expect([host, res.status, res.body.error?.details?.reason]).toEqual([host, 400, 'host_not_allowed']);
    }
    for (const host of ['localhost', '0x7f000001', '127.0.0.1']) {
      const res = await app.call('PUT', api('/mailbox'), { session: s, body: settings(host) });
      expect([host, res.status]).toEqual([host, 200]);
    }
    await app.db.sql`delete from mailboxes where workspace_id = ${ws.id}`;
  });

  it('wt mailbox set refuses them too', async () => {
    const wt = path.resolve('bin/wt.js');
    const env = cleanEnv({ DATABASE_URL: app.db.url, LOG_LEVEL: 'silent', WT_SECRET_KEY: KEY, WT_MAILBOX_PASSWORD: 'probe-password' });
    const set = await runToEnd('node', [wt, 'mailbox', 'set', '--workspace', ws.slug, '--host', '169.254.169.254', '--port', '993', '--user', 'probe'], env);
    expect(set.code).toBe(2);
    expect(set.stderr).toMatch(/host must be a public/);
    const [{ n }] = await app.db.sql<[{ n: number }]>`select count(*)::int as n from mailboxes where workspace_id = ${ws.id}`;
    expect(n).toBe(0);
  });
});

/** A resolver whose answers the test changes, as a DNS rebinding attacker would. */
function rebinding(initial: Record<string, string[]>) {
  const table = { ...initial };
  const guard = createOutboundGuard({
    allowLoopback: true,
    resolve: async (name) => {
      const answer = table[name];
      if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
      return answer;
    },
  });
  return { table, guard };
}

function jobCtx(outbound: OutboundGuard): JobCtx {
  return {
    sql: app.db.sql,
    now: () => new Date(),
    log: makeLogger('trace', capture),
    pdf: null,
    mailer: { send: () => Promise.reject(new Error('the intake sends no mail')) },
    mailFrom: 'Support <support@agency.test>',
    outbound,
  };
}

async function ownerCtx(): Promise<{ ctx: Ctx; ws: Workspace }> {
  const w = await makeWorkspace(app.db.sql);
  const o = await makeUser(app.db.sql, w, { role: 'owner' });
  return { ws: w, ctx: makeCtx({ sql: app.db.sql }, await operatorPrincipal(app.db.sql, w.slug, o.email)) };
}

async function mailboxOf(w: Workspace): Promise<{ id: string; lastError: string | null }> {
  const [row] = await app.db.sql<{ id: string; lastError: string | null }[]>`select id, last_error as "lastError" from mailboxes where workspace_id = ${w.id}`;
  return row!;
}

describe('the guard at write time and at connect time', () => {
  it('a host name that resolves to a private address is refused when written (an injected resolver)', async () => {
    const { ctx } = await ownerCtx();
    const { guard } = rebinding({ 'imap.rebind.test': ['10.0.0.1'] });
    const err = await runOp(setMailbox, { ...ctx, mailbox: { secrets: box, outbound: guard } }, { ...settings('imap.rebind.test') }).catch((e: unknown) => e);
    expect(isAppError(err) && [err.status, err.details]).toEqual([400, { reason: 'host_not_allowed', field: 'host' }]);
  });

  it('the poll connects to the address it checked, and checks again: a name rebound to a private address is not connected to', async () => {
    const { ctx, ws: w } = await ownerCtx();
    const folder = `G${randomBytes(4).toString('hex')}`;
    await imap.deliver(folder, eml('plain'));
    // a name only the injected resolver knows: the poll can reach dovecot only through the address the guard answered
    const { table, guard } = rebinding({ 'imap.rebind.test': [imap.host] });
    await runOp(
      setMailbox,
      { ...ctx, mailbox: { secrets: box, outbound: guard } },
      { host: 'imap.rebind.test', port: imap.port, secure: false, user: imap.user, password: imap.password, folder },
    );
    const mb = await mailboxOf(w);
    const first = await pollMailbox(jobCtx(guard), { mailboxId: mb.id }, { connect: connectImap, secrets: box });
    expect(first).toMatchObject({ status: 'polled', counts: { imported: 1 } });

    table['imap.rebind.test'] = ['10.0.0.1'];
    await imap.deliver(folder, eml('plain', { headers: { 'Message-ID': '<rebound@acme.test>' } }));
    const second = await pollMailbox(jobCtx(guard), { mailboxId: mb.id }, { connect: connectImap, secrets: box });
    expect(second).toMatchObject({ status: 'failed', error: HOST_REFUSED });
    expect((await mailboxOf(w)).lastError).toBe(HOST_REFUSED);
    // the cause is in the server's log only
    expect(lines.join('')).toContain('resolves to private address 10.0.0.1');
  });

  it('a poll without a configured guard refuses loopback (the strict rule)', async () => {
    const { ctx, ws: w } = await ownerCtx();
    await runOp(
      setMailbox,
      { ...ctx, mailbox: { secrets: box, outbound: loopbackGuard } },
      { host: imap.host, port: imap.port, secure: false, user: imap.user, password: imap.password },
    );
    const { outbound: _none, ...unguarded } = jobCtx(loopbackGuard);
    const result = await pollMailbox(unguarded, { mailboxId: (await mailboxOf(w)).id }, { connect: connectImap, secrets: box });
    expect(result).toMatchObject({ status: 'failed', error: HOST_REFUSED });
  });
});

describe('lastError does not map the network', () => {
  it('a closed port, a port that hangs up and a port speaking another protocol read alike; a refused login says so', async () => {
    const closedPort = await freePort();
    const hangUp = net.createServer((s) => s.destroy());
    const ssh = net.createServer((s) => s.end('SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n'));
    await Promise.all([hangUp, ssh].map((srv) => new Promise<void>((r) => srv.listen(0, '127.0.0.1', r))));
    const portOf = (srv: net.Server) => (srv.address() as net.AddressInfo).port;
    try {
      const errors: string[] = [];
      for (const port of [closedPort, portOf(hangUp), portOf(ssh)]) {
        const { ctx, ws: w } = await ownerCtx();
        await runOp(
          setMailbox,
          { ...ctx, mailbox: { secrets: box, outbound: loopbackGuard } },
          { host: '127.0.0.1', port, secure: false, user: imap.user, password: imap.password },
        );
        const result = await pollMailbox(jobCtx(loopbackGuard), { mailboxId: (await mailboxOf(w)).id }, { connect: connectImap, secrets: box });
        errors.push(result.status === 'failed' ? result.error : result.status);
      }
      expect(errors).toEqual([CONNECT_FAILED, CONNECT_FAILED, CONNECT_FAILED]);
      // the detail is in the server's log
      expect(lines.join('')).toContain('ECONNREFUSED');

      const { ctx, ws: w } = await ownerCtx();
      await runOp(
        setMailbox,
        { ...ctx, mailbox: { secrets: box, outbound: loopbackGuard } },
        { host: imap.host, port: imap.port, secure: false, user: imap.user, password: 'not-the-password' },
      );
      const refused = await pollMailbox(jobCtx(loopbackGuard), { mailboxId: (await mailboxOf(w)).id }, { connect: connectImap, secrets: box });
      expect(refused).toMatchObject({ status: 'failed', error: expect.stringMatching(/AUTHENTICATIONFAILED/) });
    } finally {
      hangUp.close();
      ssh.close();
    }
  });
});
