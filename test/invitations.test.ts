import { createHash } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailer } from '../src/jobs/machinery/mail-from-config.ts';
import { startWorker, type StartedWorker } from '../src/jobs/worker.ts';
import { makeLogger } from '../src/log.ts';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makeClient, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { startSmtpSink, type SinkMessage, type SmtpSink } from './helpers/smtp.ts';
import { cleanEnv, runToEnd } from './helpers/spawn.ts';

/**
 * Invitations (issue 22) through HTTP with a real graphile-worker and a real SMTP server: the email
 * carries a one-time link (its secret stored only hashed, never in a job's payload), accepting it
 * sets the password and starts a session, and every refusal has its reason.
 */
let app: TestApp;
let smtp: SmtpSink;
let worker: StartedWorker;
let ws: Workspace;
let owner: Person;
let admin: Person;
let member: Person;
let ownerSession: SessionCookie;
let adminSession: SessionCookie;
let clientId: string;
const PUBLIC_URL = 'https://wt.example.test';

beforeAll(async () => {
  app = await startTestApp();
  smtp = await startSmtpSink();
  const services = {
    sql: app.db.sql,
    now: () => new Date(),
    log: makeLogger('silent'),
    pdf: null,
    mailer: createMailer({ SMTP_URL: smtp.url }),
    mailFrom: 'Work tracker <noreply@agency.test>',
    publicUrl: PUBLIC_URL,
  };
  worker = await startWorker(app.db.url, services, { concurrency: 2, pollInterval: 100 });
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  owner = await makeUser(sql, ws, { role: 'owner', name: 'Olivia Owner' });
  admin = await makeUser(sql, ws, { role: 'admin' });
  member = await makeUser(sql, ws, { role: 'member' });
  clientId = (await makeClient(sql, ws, { name: 'Acme' })).id;
  ownerSession = await login(app, owner.email, owner.password);
  adminSession = await login(app, admin.email, admin.password);
  await sql`update workspaces set mail_from_name = 'Agentur "Nord"', mail_reply_to = 'office@agency.test', default_timezone = 'Europe/Berlin',
    default_weekly_target_minutes = 2400 where id = ${ws.id}`;
}, 60_000);
afterAll(async () => {
  await worker?.stop();
  await smtp?.close();
  await app?.close();
});

const api = (p: string) => `/api/w/${ws.slug}${p}`;
const asOwner = (method: string, p: string, body?: unknown) => app.call(method, api(p), { session: ownerSession, body });
const uniq = () => Math.random().toString(36).slice(2, 10);
const sha256 = (s: string) => createHash('sha256').update(s).digest();

/** The messages to `address`, waiting (bounded, to stop a hang) until there are `n`. */
async function mailTo(address: string, n = 1): Promise<SinkMessage[]> {
  for (let i = 0; i < 300 && smtp.messagesTo(address).length < n; i++) await new Promise((r) => setTimeout(r, 50));
  const got = smtp.messagesTo(address);
  expect(got.length, `emails to ${address}`).toBe(n);
  return got;
}

const linkIn = (m: SinkMessage) => {
  const match = new RegExp(`${PUBLIC_URL}/ops/join/([A-Za-z0-9_-]+)`).exec(m.text ?? '');
  expect(match, m.text).not.toBeNull();
  return match![1]!;
};

const invite = (body: Record<string, unknown>, session = ownerSession) => app.call('POST', api('/invitations'), { session, body });

describe('an invitation', () => {
  it('is emailed with a one-time link; accepting it sets the password, joins with the defaults and starts a session', async () => {
    const email = `nina-${uniq()}@example.test`;
    const res = await invite({ email, name: 'Nina New', role: 'member' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ email, name: 'Nina New', role: 'member', clientId: null, state: 'pending', invitedBy: owner.id });
    expect(Date.parse(res.body.expiresAt) - Date.parse(res.body.sentAt)).toBe(7 * 86_400_000);
    const [mail] = await mailTo(email);
    expect(mail!.headers.get('from')).toMatchObject({ value: [{ name: 'Agentur "Nord"', address: 'noreply@agency.test' }] });
    expect(mail!.headers.get('reply-to')).toMatchObject({ value: [{ address: 'office@agency.test' }] });
    expect(mail!.headers.get('auto-submitted')).toBe('auto-generated');
    const secret = linkIn(mail!);
    expect(JSON.stringify(res.body)).not.toContain(secret);
    // only the hash is stored, and no job payload holds the secret
    const [row] = await app.db.sql<{ token_hash: Buffer; message_id: string }[]>`select token_hash, message_id from invitations where id = ${res.body.id}`;
    expect(row!.token_hash.equals(sha256(secret))).toBe(true);
    expect(row!.message_id).toBe(mail!.messageId);
    const payloads = await app.db.sql`select payload::text from queued_jobs where payload::text like ${'%' + secret + '%'}`;
    expect(payloads).toHaveLength(0);

    const preview = await app.call('GET', `/api/auth/invitations/${secret}`);
    expect(preview.status).toBe(200);
    expect(preview.body).toMatchObject({ email, name: 'Nina New', role: 'member', workspace: { slug: ws.slug }, clientName: null, hasLogin: false });

    const accepted = await app.call('POST', `/api/auth/invitations/${secret}/accept`, { body: { password: 'a long passphrase' } });
    expect(accepted.status).toBe(200);
    expect(accepted.body.workspaces).toEqual([{ slug: ws.slug, name: expect.any(String), role: 'member' }]);
    const cookie = (accepted.headers.get('set-cookie') ?? '').split(';')[0]!;
    expect(cookie).toMatch(/^wt_session=/);
    const session = { cookie, csrfToken: accepted.body.csrfToken as string };
    expect((await app.call('GET', api('/workflow'), { session })).status).toBe(200);
    const [m] = await app.db.sql`select m.role, m.timezone, m.weekly_target_minutes from memberships m join identities i on i.id = m.identity_id
      where m.workspace_id = ${ws.id} and i.email = ${email}`;
    expect(m).toMatchObject({ role: 'member', timezone: 'Europe/Berlin', weekly_target_minutes: 2400 });
    // the password works for login, and the link works once
    await login(app, email, 'a long passphrase');
    const again = await app.call('POST', `/api/auth/invitations/${secret}/accept`, { body: { password: 'a long passphrase' } });
    expect(again.status).toBe(404);
    expect(again.body.error.details.reason).toBe('unknown_invitation');
    expect((await app.call('GET', `/api/auth/invitations/${secret}`)).status).toBe(404);
    const list = await asOwner('GET', '/invitations?state=accepted');
    expect(list.body.invitations.map((i: { id: string }) => i.id)).toContain(res.body.id);
  });

  it('of a client user names the client; the roles and client must fit', async () => {
    const email = `carl-${uniq()}@example.test`;
    const noClient = await invite({ email, name: 'Carl', role: 'client' });
    expect([noClient.status, noClient.body.error.details]).toEqual([400, { reason: 'client_role_needs_client', field: 'clientId' }]);
    const staffWithClient = await invite({ email, name: 'Carl', role: 'member', clientId });
    expect([staffWithClient.status, staffWithClient.body.error.details.reason]).toEqual([400, 'client_role_needs_client']);
    const unknown = await invite({ email, name: 'Carl', role: 'client', clientId: '00000000-0000-4000-8000-000000000000' });
    expect([unknown.status, unknown.body.error.details.reason]).toEqual([404, 'unknown_client']);
    const agent = await invite({ email, name: 'Carl', role: 'agent' });
    expect([agent.status, agent.body.error.details.reason]).toEqual([400, 'validation']);
    for (const bad of ['a@b.test, c@d.test', 'Carl <carl@example.test>', 'carl@example.test\r\nBcc: x@y.test', 'no-at-sign']) {
      const r = await invite({ email: bad, name: 'Carl', role: 'member' });
      expect([r.status, r.body.error.details], bad).toEqual([400, { reason: 'bad_address', field: 'email' }]);
    }
    const ok = await invite({ email, name: 'Carl Client', role: 'client', clientId });
    expect(ok.status).toBe(201);
    const secret = linkIn((await mailTo(email))[0]!);
    expect((await app.call('GET', `/api/auth/invitations/${secret}`)).body).toMatchObject({ role: 'client', clientName: 'Acme' });
    const accepted = await app.call('POST', `/api/auth/invitations/${secret}/accept`, { body: { password: 'client passphrase' } });
    expect(accepted.body.workspaces).toEqual([{ slug: ws.slug, name: expect.any(String), role: 'client' }]);
  });

  it('is one per address while pending, and never for a member', async () => {
    const email = `dup-${uniq()}@example.test`;
    const first = await invite({ email, name: 'Dup', role: 'member' });
    expect(first.status).toBe(201);
    const second = await invite({ email: email.toUpperCase(), name: 'Dup', role: 'member' });
    expect([second.status, second.body.error.details]).toEqual([409, { reason: 'invitation_pending', invitationId: first.body.id }]);
    const existing = await invite({ email: member.email, name: 'Member', role: 'member' });
    expect([existing.status, existing.body.error.details]).toEqual([409, { reason: 'already_member', field: 'email' }]);
    // an expired one gives way to a new one
    await app.db.sql`update invitations set expires_at = now() - interval '1 minute' where id = ${first.body.id}`;
    const third = await invite({ email, name: 'Dup', role: 'member' });
    expect(third.status).toBe(201);
    const states = await asOwner('GET', '/invitations');
    expect(states.body.invitations.find((i: { id: string }) => i.id === first.body.id).state).toBe('revoked');
  });

  it('is sent by an Owner or Admin only (a session or an admin-scoped token); only an Owner invites an Owner', async () => {
    const email = () => `who-${uniq()}@example.test`;
    const memberSession = await login(app, member.email, member.password);
    const byMember = await app.call('POST', api('/invitations'), { session: memberSession, body: { email: email(), name: 'X', role: 'member' } });
    expect([byMember.status, byMember.body.error.details.reason]).toEqual([403, 'admin_only']);
    const adminOwner = await invite({ email: email(), name: 'X', role: 'owner' }, adminSession);
    expect([adminOwner.status, adminOwner.body.error.details]).toEqual([403, { reason: 'owner_only', field: 'role' }]);
    expect((await invite({ email: email(), name: 'X', role: 'admin' }, adminSession)).status).toBe(201);
    const write = await makeToken(app.db.sql, ws, owner, { scopes: ['read', 'write', 'triage'] });
    const noScope = await app.call('POST', api('/invitations'), { token: write.token, body: { email: email(), name: 'X', role: 'member' } });
    expect([noScope.status, noScope.body.error.details]).toEqual([403, { reason: 'missing_scope', scope: 'admin' }]);
    const adminToken = await makeToken(app.db.sql, ws, owner, { scopes: ['admin'] });
    expect((await app.call('POST', api('/invitations'), { token: adminToken.token, body: { email: email(), name: 'X', role: 'owner' } })).status).toBe(201);
    const memberAdminToken = await makeToken(app.db.sql, ws, member, { scopes: ['admin'] });
    const lifted = await app.call('GET', api('/invitations'), { token: memberAdminToken.token });
    expect([lifted.status, lifted.body.error.details.reason]).toEqual([403, 'admin_only']);
  });

  it('is resent with a new link (the old one stops working) and revoked; a closed one is 409', async () => {
    const email = `re-${uniq()}@example.test`;
    const inv = (await invite({ email, name: 'Rene', role: 'member' })).body;
    const first = linkIn((await mailTo(email))[0]!);
    await app.db.sql`update invitations set expires_at = now() - interval '1 minute' where id = ${inv.id}`;
    expect((await app.call('GET', `/api/auth/invitations/${first}`)).status).toBe(404);
    const resent = await asOwner('POST', `/invitations/${inv.id}/resend`);
    expect(resent.status).toBe(200);
    expect(resent.body.state).toBe('pending');
    const second = linkIn((await mailTo(email, 2))[1]!);
    expect(second).not.toBe(first);
    expect((await app.call('GET', `/api/auth/invitations/${first}`)).status).toBe(404);
    expect((await app.call('GET', `/api/auth/invitations/${second}`)).status).toBe(200);
    const revoked = await asOwner('DELETE', `/invitations/${inv.id}`);
    expect([revoked.status, revoked.body.state]).toEqual([200, 'revoked']);
    expect((await asOwner('DELETE', `/invitations/${inv.id}`)).status).toBe(200);
    expect((await app.call('GET', `/api/auth/invitations/${second}`)).status).toBe(404);
    const again = await asOwner('POST', `/invitations/${inv.id}/resend`);
    expect([again.status, again.body.error.details]).toEqual([409, { reason: 'invitation_closed', state: 'revoked' }]);
    const unknown = await asOwner('POST', '/invitations/00000000-0000-4000-8000-000000000000/resend');
    expect([unknown.status, unknown.body.error.details.reason]).toEqual([404, 'unknown_invitation']);
    const malformed = await asOwner('DELETE', '/invitations/nope');
    expect([malformed.status, malformed.body.error.details]).toEqual([400, { reason: 'bad_uuid', field: 'id' }]);
  });

  it('an accepted invitation cannot be revoked; someone with a login proves it with their current password', async () => {
    const other = await makeWorkspace(app.db.sql);
    const elsewhere = await makeUser(app.db.sql, other, { role: 'member' });
    const inv = (await invite({ email: elsewhere.email, name: 'Ella', role: 'member' })).body;
    const secret = linkIn((await mailTo(elsewhere.email))[0]!);
    expect((await app.call('GET', `/api/auth/invitations/${secret}`)).body.hasLogin).toBe(true);
    const wrong = await app.call('POST', `/api/auth/invitations/${secret}/accept`, { body: { password: 'not her password' } });
    expect([wrong.status, wrong.body.error.details.reason]).toEqual([403, 'wrong_password']);
    const short = await app.call('POST', `/api/auth/invitations/${secret}/accept`, { body: { password: 'short' } });
    expect([short.status, short.body.error.details]).toMatchObject([400, { reason: 'validation', field: 'password' }]);
    const ok = await app.call('POST', `/api/auth/invitations/${secret}/accept`, { body: { password: elsewhere.password } });
    expect(ok.status).toBe(200);
    expect(ok.body.workspaces.map((w: { slug: string }) => w.slug).sort()).toEqual([other.slug, ws.slug].sort());
    await login(app, elsewhere.email, elsewhere.password);
    const closed = await asOwner('DELETE', `/invitations/${inv.id}`);
    expect([closed.status, closed.body.error.details]).toEqual([409, { reason: 'invitation_closed', state: 'accepted' }]);
  });

  it("brings a deactivated member back when accepted; an agent account's address cannot accept", async () => {
    const sql = app.db.sql;
    const back = await makeUser(sql, ws, { role: 'member' });
    await sql`update memberships set deactivated_at = now() where workspace_id = ${ws.id} and identity_id = ${back.id}`;
    expect((await invite({ email: back.email, name: 'Back Again', role: 'admin' })).status).toBe(201);
    const secret = linkIn((await mailTo(back.email))[0]!);
    const joined = await app.call('POST', `/api/auth/invitations/${secret}/accept`, { body: { password: back.password } });
    expect(joined.body.workspaces).toEqual([{ slug: ws.slug, name: expect.any(String), role: 'admin' }]);
    const [m] = await sql`select role, deactivated_at from memberships where workspace_id = ${ws.id} and identity_id = ${back.id}`;
    expect(m).toEqual({ role: 'admin', deactivated_at: null });

    const agentEmail = `bot-${uniq()}@example.test`;
    await sql`insert into identities (kind, email, name) values ('agent', ${agentEmail}, 'Bot')`;
    expect((await invite({ email: agentEmail, name: 'Bot', role: 'member' })).status).toBe(201);
    const botLink = linkIn((await mailTo(agentEmail))[0]!);
    const taken = await app.call('POST', `/api/auth/invitations/${botLink}/accept`, { body: { password: 'a long passphrase' } });
    expect([taken.status, taken.body.error.details]).toEqual([409, { reason: 'address_taken' }]);
  });

  it("opens the console's join page: the form joins and signs in; a used link shows the same gone page as an unknown one", async () => {
    const email = `page-${uniq()}@example.test`;
    expect((await invite({ email, name: 'Paula <Page>', role: 'member' })).status).toBe(201);
    const secret = linkIn((await mailTo(email))[0]!);
    const page = await fetch(`${app.base}/ops/join/${secret}`);
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).toContain(email);
    expect(text).toContain('Paula &lt;Page&gt;');
    expect(text).toContain(`action="/ops/join/${secret}"`);
    const post = (password: string, origin = app.base) =>
      fetch(`${app.base}/ops/join/${secret}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
        body: new URLSearchParams({ password }).toString(),
      });
    expect((await post('a long passphrase', 'https://evil.example')).status).toBe(403);
    const short = await post('short');
    expect(short.status).toBe(400);
    expect(await short.text()).toContain('password');
    const joined = await post('a long passphrase');
    expect([joined.status, joined.headers.get('location')]).toEqual([303, '/ops']);
    expect(joined.headers.get('set-cookie')).toMatch(/^wt_session=/);
    await login(app, email, 'a long passphrase');
    const gone = await fetch(`${app.base}/ops/join/${secret}`);
    const unknown = await fetch(`${app.base}/ops/join/never-issued`);
    expect([gone.status, unknown.status]).toEqual([404, 404]);
    expect(await gone.text()).toBe(await unknown.text());
  });

  it('is audited with its door', async () => {
    const rows = await app.db.sql`select action, door, outcome from ops_audit where workspace_id = ${ws.id} and action like 'invitation.%'`;
    expect(rows).toContainEqual({ action: 'invitation.create', door: 'rest', outcome: 'succeeded' });
    expect(rows).toContainEqual({ action: 'invitation.create', door: 'rest', outcome: 'refused' });
    expect(rows).toContainEqual({ action: 'invitation.revoke', door: 'rest', outcome: 'succeeded' });
  });
});

describe('wt invite', () => {
  it('calls the same operation as the CLI principal: the worker emails the link, the audit names the door', async () => {
    const wt = (...args: string[]) => runToEnd('node', [path.resolve('bin/wt.js'), ...args], cleanEnv({ DATABASE_URL: app.db.url, LOG_LEVEL: 'silent' }));
    const email = `cli-${uniq()}@example.test`;
    const ok = await wt('invite', '--workspace', ws.slug, '--email', email, '--name', 'Cleo Cli', '--role', 'member');
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ email, role: 'member', state: 'pending', invitedBy: owner.id });
    linkIn((await mailTo(email))[0]!);
    const refused = await wt('invite', '--workspace', ws.slug, '--email', email, '--name', 'Cleo Cli', '--role', 'member');
    expect([refused.code, refused.stderr]).toEqual([2, expect.stringContaining('pending invitation')]);
    const asMember = await wt('invite', '--workspace', ws.slug, '--email', `x-${email}`, '--name', 'X', '--role', 'member', '--as', member.email);
    expect(asMember.code).toBe(2);
    const [audit] = await app.db.sql`select door, outcome from ops_audit where workspace_id = ${ws.id} and target = ${`email ${email}`} order by id limit 1`;
    expect(audit).toEqual({ door: 'cli', outcome: 'succeeded' });
  });
});
