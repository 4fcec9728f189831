import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetMailJob } from '../src/core/jobs/catalog.ts';
import { createMailer } from '../src/jobs/machinery/mail-from-config.ts';
import { startWorker, type StartedWorker } from '../src/jobs/worker.ts';
import { makeLogger } from '../src/log.ts';
import { login, startTestApp, type TestApp } from './helpers/app.ts';
import { makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { startSmtpSink, type SinkMessage, type SmtpSink } from './helpers/smtp.ts';

/**
 * Password reset by email (issue 22), with a real worker and SMTP server: the request answers the
 * same whoever asks, the link works once within an hour, every session of the person ends, and the
 * request is throttled like login.
 */
let app: TestApp;
let smtp: SmtpSink;
let worker: StartedWorker;
let ws: Workspace;
const PUBLIC_URL = 'https://wt.example.test';
const PER_EMAIL = 4;

beforeAll(async () => {
  app = await startTestApp({ env: { LOGIN_MAX_FAILURES_PER_EMAIL: String(PER_EMAIL) } });
  smtp = await startSmtpSink();
  worker = await startWorker(
    app.db.url,
    {
      sql: app.db.sql,
      now: () => new Date(),
      log: makeLogger('silent'),
      pdf: null,
      mailer: createMailer({ SMTP_URL: smtp.url }),
      mailFrom: 'Work tracker <noreply@agency.test>',
      publicUrl: PUBLIC_URL,
    },
    { concurrency: 2, pollInterval: 100 },
  );
  ws = await makeWorkspace(app.db.sql);
  await app.db.sql`update workspaces set mail_from_name = 'Agentur Nord', mail_reply_to = 'help@agency.test' where id = ${ws.id}`;
}, 60_000);
afterAll(async () => {
  await worker?.stop();
  await smtp?.close();
  await app?.close();
});

const ask = (email: string) => app.call('POST', '/api/auth/password-reset', { body: { email } });
const reset = (token: string, password: string) => app.call('POST', `/api/auth/password-reset/${token}`, { body: { password } });

async function mailTo(address: string, n = 1): Promise<SinkMessage[]> {
  for (let i = 0; i < 300 && smtp.messagesTo(address).length < n; i++) await new Promise((r) => setTimeout(r, 50));
  expect(smtp.messagesTo(address).length, `emails to ${address}`).toBe(n);
  return smtp.messagesTo(address);
}

const linkIn = (m: SinkMessage) => {
  const match = new RegExp(`${PUBLIC_URL}/ops/reset/([A-Za-z0-9_-]+)`).exec(m.text ?? '');
  expect(match, m.text).not.toBeNull();
  return match![1]!;
};

/** Waits (bounded) until every queued reset email job has run. */
async function drained(): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const [r] = await app.db.sql<{ n: number }[]>`
      select count(*)::int as n from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id where t.identifier = ${resetMailJob.task}`;
    if (r!.n === 0) return;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error('reset jobs still queued');
}

describe('a password reset', () => {
  let person: Person;
  beforeAll(async () => {
    person = await makeUser(app.db.sql, ws, { role: 'member' });
  });

  it('answers the same for a known and an unknown address, and emails only the known one', async () => {
    const unknown = `nobody-${Date.now()}@example.test`;
    const a = await ask(person.email);
    const b = await ask(unknown);
    expect([a.status, a.body]).toEqual([202, { ok: true }]);
    expect([b.status, b.body]).toEqual([a.status, a.body]);
    const [mail] = await mailTo(person.email);
    expect(mail!.subject).toBe('Reset your password');
    expect(mail!.headers.get('from')).toMatchObject({ value: [{ name: 'Agentur Nord', address: 'noreply@agency.test' }] });
    expect(mail!.headers.get('reply-to')).toMatchObject({ value: [{ address: 'help@agency.test' }] });
    await drained();
    expect(smtp.messagesTo(unknown)).toHaveLength(0);
    const secret = linkIn(mail!);
    const [row] = await app.db.sql<{ token_hash: Buffer; expires_at: Date; created_at: Date }[]>`
      select token_hash, expires_at, created_at from password_resets where identity_id = ${person.id}`;
    expect(row!.token_hash.equals(createHash('sha256').update(secret).digest())).toBe(true);
    expect(row!.expires_at.getTime() - row!.created_at.getTime()).toBe(3600_000);
  });

  it('sets the new password once, ends every session of the person, and closes their other links', async () => {
    const before = await login(app, person.email, person.password);
    await ask(person.email);
    const secret = linkIn((await mailTo(person.email, 2))[1]!);
    const short = await reset(secret, 'short');
    expect([short.status, short.body.error.details]).toMatchObject([400, { reason: 'validation', field: 'password' }]);
    const ok = await reset(secret, 'a brand new passphrase');
    expect([ok.status, ok.body]).toEqual([200, { ok: true }]);
    expect((await app.call('GET', '/api/auth/session', { session: before })).status).toBe(401);
    await login(app, person.email, 'a brand new passphrase');
    await expect(login(app, person.email, person.password)).rejects.toThrow(/401/);
    const again = await reset(secret, 'another new passphrase');
    expect([again.status, again.body.error.details]).toEqual([404, { reason: 'unknown_reset' }]);
    // the first email's link was closed with it
    const first = linkIn(smtp.messagesTo(person.email)[0]!);
    expect((await reset(first, 'another new passphrase')).status).toBe(404);
    person.password = 'a brand new passphrase';
  });

  it("opens the console's reset page, whose form sets the password", async () => {
    const who = await makeUser(app.db.sql, ws, { role: 'member' });
    await ask(who.email);
    const secret = linkIn((await mailTo(who.email))[0]!);
    expect((await fetch(`${app.base}/ops/reset/${secret}`)).status).toBe(200);
    const post = (password: string) =>
      fetch(`${app.base}/ops/reset/${secret}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.base },
        body: new URLSearchParams({ password }).toString(),
      });
    expect((await post('short')).status).toBe(400);
    const done = await post('the page passphrase');
    expect([done.status, done.headers.get('location')]).toEqual([303, '/ops/login']);
    await login(app, who.email, 'the page passphrase');
    expect((await post('the page passphrase')).status).toBe(404);
  });

  it('expires after an hour', async () => {
    await ask(person.email);
    const secret = linkIn((await mailTo(person.email, 3))[2]!);
    await app.db.sql`update password_resets set expires_at = now() - interval '1 second' where identity_id = ${person.id} and used_at is null`;
    const late = await reset(secret, 'too late passphrase');
    expect([late.status, late.body.error.details.reason]).toEqual([404, 'unknown_reset']);
    expect((await reset('not-a-link', 'too late passphrase')).status).toBe(404);
  });

  it('sends nothing to a deactivated member (no active workspace)', async () => {
    const gone = await makeUser(app.db.sql, ws, { role: 'member' });
    await app.db.sql`update memberships set deactivated_at = now() where identity_id = ${gone.id}`;
    expect((await ask(gone.email)).status).toBe(202);
    await drained();
    expect(smtp.messagesTo(gone.email)).toHaveLength(0);
  });

  it('is throttled like login: the same email is refused with 429 after the limit, whatever the address has', async () => {
    const target = await makeUser(app.db.sql, ws, { role: 'member' });
    for (let i = 0; i < PER_EMAIL; i++) expect((await ask(target.email)).status).toBe(202);
    const refused = await ask(target.email);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'rate_limited', details: { reason: 'too_many_attempts' } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const bad = await app.call('POST', '/api/auth/password-reset', { body: { email: 'x' } });
    expect([bad.status, bad.body.error.details]).toMatchObject([400, { reason: 'validation', field: 'email' }]);
  });
});
