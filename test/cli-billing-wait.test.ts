import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createMailer } from '../src/jobs/machinery/mail-from-config.ts';
import { startWorker, type StartedWorker } from '../src/jobs/worker.ts';
import { makeLogger } from '../src/log.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.ts';
import { cleanEnv, runToEnd } from './helpers/spawn.ts';
import { wtHere } from './helpers/wt.ts';

/**
 * `wt billing run --wait [--approve]` and `wt billing approve` (issue 23) over the demo, whose
 * clients review their timesheets before sending: a real worker (in this process) and a real SMTP
 * server. `--wait` stops at the review with nothing sent; `billing approve --wait` sends and
 * follows the run to its end; `--approve` does both in one command.
 */
const wt = path.resolve('bin/wt.js');
let app: TestApp;
let smtp: SmtpSink;
let worker: StartedWorker;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  app = await startTestApp();
  smtp = await startSmtpSink();
  env = cleanEnv({ DATABASE_URL: app.db.url, LOG_LEVEL: 'silent' });
  const services = {
    sql: app.db.sql,
    now: () => new Date(),
    log: makeLogger('silent'),
    pdf: null,
    mailer: createMailer({ SMTP_URL: smtp.url }),
    mailFrom: 'billing@northwind.test',
  };
  worker = await startWorker(app.db.url, services, { concurrency: 4, pollInterval: 100 });
}, 60_000);
afterAll(async () => {
  await worker?.stop();
  await smtp?.close();
  await app?.close();
});

/** `wt` in this process (test/helpers/wt.ts); `real` starts `node bin/wt.js` (`billing run --wait` as a process follows the run). */
const run = (...args: string[]) => wtHere(env, args);
const real = (...args: string[]) => runToEnd('node', [wt, ...args], env);
const lastMonth = () => {
  const d = new Date();
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() - 1);
  return d.toISOString().slice(0, 7);
};

it('--wait stops at the review with nothing sent; approve --wait sends and ends completed; --approve does both', async () => {
  expect((await run('demo', '--json')).code).toBe(0);
  const held = await real('billing', 'run', '--workspace', 'northwind', '--period', lastMonth(), '--wait');
  expect(held.code, held.stderr).toBe(0);
  const first = JSON.parse(held.stdout);
  expect(first.status).toBe('awaiting_approval');
  expect(smtp.received).toHaveLength(0);

  const approved = await run('billing', 'approve', '--workspace', 'northwind', '--run', first.id, '--wait');
  expect(approved.code, approved.stderr).toBe(0);
  expect(JSON.parse(approved.stdout)).toMatchObject({ id: first.id, status: 'completed', approvedAt: expect.any(String) });
  expect(smtp.messagesTo('ap@globex.test')).toHaveLength(1);
  expect(smtp.messagesTo('buchhaltung@initech.test')).toHaveLength(1);
  const twice = await run('billing', 'approve', '--workspace', 'northwind', '--run', first.id);
  expect([twice.code, twice.stderr.trim()]).toEqual([2, 'wt: This run is completed, not awaiting approval.']);

  expect((await run('billing', 'void', '--workspace', 'northwind', '--run', first.id, '--reason', 'wrong month')).code).toBe(0);
  const again = await run('billing', 'run', '--workspace', 'northwind', '--period', lastMonth(), '--approve');
  expect(again.code, again.stderr).toBe(0);
  expect(JSON.parse(again.stdout)).toMatchObject({ status: 'completed', approvedAt: expect.any(String) });
  const globex = smtp.messagesTo('ap@globex.test').map((m) => m.subject);
  expect(globex).toHaveLength(3); // the timesheet, its void notice, the replacement
  expect(globex[2]).not.toBe(globex[0]);
  // each approval is audited with the CLI's door; the second approve's refusal too
  const audit = await app.db.sql`
    select a.door, a.outcome from ops_audit a join workspaces w on w.id = a.workspace_id
    where w.slug = 'northwind' and a.action = 'billing.run.approve' order by a.at, a.id`;
  expect(audit.map((r) => [r.door, r.outcome])).toEqual([
    ['cli', 'succeeded'],
    ['cli', 'failed'],
    ['cli', 'succeeded'],
  ]);
}, 120_000);
