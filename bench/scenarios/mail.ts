import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { operatorPrincipal } from '../../src/core/auth/operator.ts';
import { makeCtx } from '../../src/core/ctx.ts';
import { enqueuePoll } from '../../src/core/mail/intake/schedule.ts';
import { setMailbox } from '../../src/core/mail/intake/settings.ts';
import { runOp } from '../../src/core/operation.ts';
import { SecretBox } from '../../src/core/mail/secret-box.ts';
import { createOutboundGuard } from '../../src/core/net/outbound.ts';
import { addPerson } from '../../src/core/people/users.ts';
import { createWorkspace } from '../../src/core/workspaces/create.ts';
import { startDovecot } from '../../test/helpers/dovecot.ts';
import { spawnGroup } from '../../test/helpers/spawn.ts';
import { serviceEnv } from '../lib.ts';
import type { Scenario } from '../scenario.ts';

const MESSAGES = Number(process.env.BENCH_MAIL_MESSAGES ?? 1000);

/** A plain new mail of about 10 KB, each from its own sender and with its own Message-ID. */
function message(i: number): string {
  const body = Array.from({ length: 130 }, (_, n) => `Line ${n} of message ${i}: the checkout page shows the wrong total again.`).join('\r\n');
  return [
    `From: Customer ${i} <customer${i}@example.org>`,
    'To: support@agency.test',
    `Subject: Problem report ${i}`,
    `Message-ID: <bench-${i}-${randomBytes(4).toString('hex')}@example.org>`,
    `Date: ${new Date(Date.UTC(2026, 10, 1, 9, 0, i % 60)).toUTCString()}`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    body,
    '',
  ].join('\r\n');
}

const rssOf = async (pid: number) => {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
};

/**
 * Issue 12: 1,000 queued messages of about 10 KB each imported by the `mail:poll` job of a worker in
 * its own process, from Debian's dovecot on loopback; target under 30 s; messages/s and the worker's
 * RSS sampled through the import (it must stay flat: sources are fetched in bounded batches).
 */
export const mail: Scenario = {
  name: 'mail',
  async run(env) {
    const imap = await startDovecot();
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'wt-bench-mail-'));
    const key = randomBytes(32);
    const notes: string[] = [];
    try {
      for (let i = 0; i < MESSAGES; i += 100) {
        await imap.deliver('INBOX', ...Array.from({ length: 100 }, (_, n) => message(i + n)));
      }
      const slug = `mail-${process.pid}`;
      const ws = await createWorkspace(env.sql, { slug, name: 'Bench Mail Agency' });
      await addPerson(env.sql, {
        workspaceId: ws,
        email: `owner-mail-${process.pid}@bench.test`,
        name: 'Mail Owner',
        role: 'owner',
        password: 'bench-mail-pass',
      });
      const ctx = makeCtx({ sql: env.sql }, await operatorPrincipal(env.sql, slug));
      const loopback = createOutboundGuard({ allowLoopback: true });
      await runOp(
        setMailbox,
        { ...ctx, mailbox: { secrets: new SecretBox(key), outbound: loopback } },
        { host: imap.host, port: imap.port, secure: false, user: imap.user, password: imap.password, enabled: true },
      );
      const [{ id: mailboxId }] = await env.sql<[{ id: string }]>`select id from mailboxes where workspace_id = ${ws}`;

      const workerEnv = {
        ...serviceEnv(env.dbUrl, 0),
        WORKER: 'on',
        CHROMIUM_PATH: '/nonexistent/chromium',
        DATA_DIR: dataDir,
        WT_SECRET_KEY: key.toString('hex'),
        // dovecot listens on loopback
        ALLOW_LOOPBACK_HOSTS: 'true',
      };
      const worker = spawnGroup('node', ['--import', 'tsx', 'src/main.ts', 'worker'], workerEnv);
      try {
        await new Promise((r) => setTimeout(r, 4000));
        const pid = worker.child.pid!;
        const idle = await rssOf(pid);
        const samples: number[] = [];
        const began = performance.now();
        await enqueuePoll(env.sql, { id: mailboxId, workspaceId: ws });
        let imported = 0;
        while (imported < MESSAGES) {
          await new Promise((r) => setTimeout(r, 100));
          [{ n: imported }] = await env.sql<[{ n: number }]>`select count(*)::int as n from intake_messages where workspace_id = ${ws} and status = 'imported'`;
          samples.push(await rssOf(pid));
          if (performance.now() - began > 300_000) throw new Error(`only ${imported} of ${MESSAGES} imported in 5 minutes: ${worker.output().slice(-2000)}`);
        }
        const seconds = (performance.now() - began) / 1000;
        const quarter = Math.max(1, Math.floor(samples.length / 4));
        const early = Math.max(...samples.slice(0, quarter));
        const peak = Math.max(...samples);
        notes.push(
          `${MESSAGES} messages of about 10 KB imported in ${seconds.toFixed(1)} s (target < 30 s) ${seconds < 30 ? 'OK' : 'MISSED'}: ${(MESSAGES / seconds).toFixed(0)} messages/s`,
          `worker RSS: idle ${idle.toFixed(0)} MB, peak in the first quarter of the import ${early.toFixed(0)} MB, peak overall ${peak.toFixed(0)} MB (${samples.length} samples; flat when the two peaks are close)`,
        );
      } finally {
        await worker.stop();
        // its password is sealed with this scenario's key, which later scenarios' services do not
        // hold: a service refuses to start over a mailbox it cannot open (issue 26)
        await env.sql`delete from mailboxes where workspace_id = ${ws}`;
      }
    } finally {
      await imap.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
    return { rows: [], notes };
  },
};
