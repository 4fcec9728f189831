import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorPrincipal } from '../src/core/auth/operator.ts';
import { makeCtx } from '../src/core/ctx.ts';
import { setMailbox } from '../src/core/mail/intake/settings.ts';
import { runOp } from '../src/core/operation.ts';
import { loadSecretBox } from '../src/core/mail/secret-box.ts';
import { crons, crontab } from '../src/core/jobs/catalog.ts';
import { startWorker, type StartedWorker } from '../src/jobs/worker.ts';
import { makeLogger } from '../src/log.ts';
import { eml, loopbackGuard, startDovecot, type Dovecot } from './helpers/dovecot.ts';
import { testDb, type TestDb } from './helpers/db.ts';
import { makeUser, makeWorkspace, type Workspace } from './helpers/factories.ts';
import { waitUntil } from './helpers/spawn.ts';

// Issue 12: polling on graphile-worker's crontab. Two worker processes (two runners, each with its
// own pool and cron) poll each enabled mailbox once per minute's tick, not twice.
//
// The tick is this minute's, which the runners find missed when they start: the catalog's line with
// graphile-worker's backfill option, and the crontab known since before it. Each runner schedules a
// backfilled tick through the same statement as a live one (a tick is taken by the one runner that
// advances its last execution), so the check is the same without waiting up to a minute (issue 26).
const BACKFILLING = `${crons.mailSchedule.schedule} ${crons.mailSchedule.task} ?fill=1m`;

const KEY = randomBytes(32).toString('hex');
process.env.WT_SECRET_KEY = KEY;

let db: TestDb;
let imap: Dovecot;
const workers: StartedWorker[] = [];

beforeAll(async () => {
  [db, imap] = await Promise.all([testDb(), startDovecot()]);
}, 60_000);
afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await imap?.stop();
  await db?.close();
});

/** A workspace whose mailbox reads a folder of its own holding one new message. */
async function mailboxWithMail(enabled: boolean): Promise<{ ws: Workspace; mailboxId: string }> {
  const ws = await makeWorkspace(db.sql);
  const owner = await makeUser(db.sql, ws, { role: 'owner' });
  const folder = `W${randomBytes(4).toString('hex')}`;
  await imap.deliver(folder, eml('plain'));
  const ctx = makeCtx({ sql: db.sql }, await operatorPrincipal(db.sql, ws.slug, owner.email));
  const box = loadSecretBox({ WT_SECRET_KEY: KEY, DATABASE_URL: db.url, DATA_DIR: '.data' });
  await runOp(
    setMailbox,
    { ...ctx, mailbox: { secrets: box, outbound: loopbackGuard } },
    { host: imap.host, port: imap.port, secure: false, user: imap.user, password: imap.password, folder, enabled },
  );
  const [{ id }] = await db.sql<[{ id: string }]>`select id from mailboxes where workspace_id = ${ws.id}`;
  return { ws, mailboxId: id };
}

describe('mail:poll on the crontab', () => {
  it('is a line of the worker crontab: every minute', () => {
    expect(crontab.split('\n')).toContain('* * * * * mail:schedule');
  });

  it('two workers running at once: each tick is scheduled once, and each enabled mailbox polled once, not twice', async () => {
    const a = await mailboxWithMail(true);
    const b = await mailboxWithMail(true);
    const off = await mailboxWithMail(false);
    const services = {
      sql: db.sql,
      now: () => new Date(),
      log: makeLogger('silent'),
      pdf: null,
      mailer: { send: () => Promise.reject(new Error('no mail is sent here')) },
      mailFrom: 'Support <support@agency.test>',
      outbound: loopbackGuard,
      secrets: loadSecretBox({ WT_SECRET_KEY: KEY, DATABASE_URL: db.url, DATA_DIR: '.data' }),
    };
    await db.sql`
      insert into graphile_worker._private_known_crontabs (identifier, known_since) values (${crons.mailSchedule.task}, now() - interval '2 minutes')`;
    workers.push(...(await Promise.all([0, 1].map(() => startWorker(db.url, services, { concurrency: 2, pollInterval: 200, crontab: BACKFILLING })))));

    // graphile-worker records each tick's execution on the crontab entry
    await waitUntil(
      'a tick recorded on the crontab entry',
      async () => {
        const rows = await db.sql`select 1 from graphile_worker._private_known_crontabs where identifier = 'mail:schedule' and last_execution is not null`;
        return rows.length === 1;
      },
      10_000,
    );

    // the missed tick: one schedule, then one poll per enabled mailbox (a bound only against a hang)
    await waitUntil(
      'a tick to schedule and run the polls',
      async () => {
        const [{ n }] = await db.sql<[{ n: number }]>`select count(*)::int as n from job_history where task = 'mail:poll' and outcome = 'succeeded'`;
        return n >= 2;
      },
      75_000,
      250,
    );
    await new Promise((r) => setTimeout(r, 1500)); // room for a second poll, were one ever queued

    // the next minute's tick may fire meanwhile: read once every tick scheduled so far has had its
    // polls (a bound only against a hang), so a tick under way is not taken for a missing poll
    const { schedules, polls } = await waitUntil(
      "every scheduled tick's polls",
      async () => {
        const [ticks, done] = await db.sql.begin('isolation level repeatable read', (tx) => [
          tx<{ ts: string; outcome: string }[]>`select payload->'_cron'->>'ts' as ts, outcome from job_history where task = 'mail:schedule' order by id`,
          tx<{ mailboxId: string; n: number }[]>`
            select payload->>'mailboxId' as "mailboxId", count(*)::int as n from job_history where task = 'mail:poll' group by 1 order by 1`,
        ]);
        return done.length === 2 && done.every((p) => p.n >= ticks.length) ? { schedules: ticks, polls: done } : false;
      },
      30_000,
      250,
    );
    expect(schedules.length).toBeGreaterThanOrEqual(1);
    expect(new Set(schedules.map((s) => s.ts)).size, 'a tick scheduled twice').toBe(schedules.length);
    expect(schedules.every((s) => s.outcome === 'succeeded')).toBe(true);
    const expected = [a.mailboxId, b.mailboxId].sort().map((mailboxId) => ({ mailboxId, n: schedules.length }));
    expect(polls, 'a mailbox polled twice for one tick').toEqual(expected);

    for (const w of [a, b]) {
      const [{ n }] = await db.sql<[{ n: number }]>`select count(*)::int as n from tickets where workspace_id = ${w.ws.id} and source = 'email'`;
      expect(n).toBe(1);
    }
    const [{ n: none }] = await db.sql<[{ n: number }]>`select count(*)::int as n from tickets where workspace_id = ${off.ws.id}`;
    expect(none).toBe(0);
  }, 120_000);
});
