import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makePeriod, makeProject, makeTicket, makeTimeEntry, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

/**
 * Administration of people (issue 22) through HTTP: the admin token scope, deactivating and
 * reactivating a member, and the workspace's settings, each refusal with its reason.
 */
let app: TestApp;
let ws: Workspace;
let owner: Person;
let admin: Person;
let member: Person;
let ownerSession: SessionCookie;
let adminSession: SessionCookie;

beforeAll(async () => {
  // the verifier's cache as long as the configuration allows, so only the revocation's NOTIFY (or the membership check) can end a token early
  app = await startTestApp({ tokenCacheMs: 60_000 });
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  owner = await makeUser(sql, ws, { role: 'owner' });
  admin = await makeUser(sql, ws, { role: 'admin' });
  member = await makeUser(sql, ws, { role: 'member' });
  ownerSession = await login(app, owner.email, owner.password);
  adminSession = await login(app, admin.email, admin.password);
}, 60_000);
afterAll(() => app?.close());

const api = (p: string) => `/api/w/${ws.slug}${p}`;
const reason = (r: { body: { error?: { details?: { reason?: string } } } }) => r.body.error?.details?.reason;

/** Polls (bounded by the ten seconds) until `path` answers 401 for this credential. */
async function answers401(opts: { token?: string; session?: SessionCookie }, path = api('/workflow')): Promise<number> {
  let status = 0;
  for (let i = 0; i < 100; i++) {
    status = (await app.call('GET', path, opts)).status;
    if (status === 401) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return status;
}

describe('the admin token scope', () => {
  it('is minted by an Owner or Admin only', async () => {
    const memberSession = await login(app, member.email, member.password);
    const refused = await app.call('POST', api('/tokens'), { session: memberSession, body: { name: 'x', scopes: ['read', 'admin'] } });
    expect([refused.status, refused.body.error.details]).toEqual([403, { reason: 'admin_only', field: 'scopes' }]);
    const plain = await app.call('POST', api('/tokens'), { session: memberSession, body: { name: 'x', scopes: ['read', 'write', 'triage'] } });
    expect(plain.status).toBe(201);
    const made = await app.call('POST', api('/tokens'), { session: adminSession, body: { name: 'provisioning', scopes: ['read', 'admin'] } });
    expect(made.status).toBe(201);
    expect(made.body.scopes).toEqual(['read', 'admin']);
    const settings = await app.call('GET', api('/settings'), { token: made.body.token });
    expect(settings.status).toBe(200);
  });

  it('is needed by a token for administration, and lifts no role', async () => {
    const write = await makeToken(app.db.sql, ws, owner, { scopes: ['read', 'write', 'triage'] });
    const noScope = await app.call('GET', api('/settings'), { token: write.token });
    expect([noScope.status, noScope.body.error.details]).toEqual([403, { reason: 'missing_scope', scope: 'admin' }]);
    const lifted = await makeToken(app.db.sql, ws, member, { scopes: ['admin'] });
    const notAdmin = await app.call('PATCH', api('/settings'), { token: lifted.token, body: { name: 'Taken over' } });
    expect([notAdmin.status, reason(notAdmin)]).toEqual([403, 'admin_only']);
    // an admin-only token reads nothing else: the scopes stay separate
    const adminOnly = await makeToken(app.db.sql, ws, owner, { scopes: ['admin'] });
    const tickets = await app.call('GET', api('/tickets'), { token: adminOnly.token });
    expect([tickets.status, tickets.body.error.details]).toEqual([403, { reason: 'missing_scope', scope: 'read' }]);
  });
});

describe('workspace settings', () => {
  it('are read and changed by an Owner or Admin, field by field, and audited', async () => {
    const before = await app.call('GET', api('/settings'), { session: ownerSession });
    expect(before.body).toMatchObject({
      id: ws.id,
      slug: ws.slug,
      defaultTimezone: 'UTC',
      defaultWeeklyTargetMinutes: null,
      mailFromName: null,
      mailReplyTo: null,
    });
    const changed = await app.call('PATCH', api('/settings'), {
      session: adminSession,
      body: {
        name: 'Agentur Nord',
        defaultTimezone: 'europe/berlin',
        defaultWeeklyTargetMinutes: 2400,
        mailFromName: 'Agentur Nord',
        mailReplyTo: 'office@nord.test',
      },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      name: 'Agentur Nord',
      defaultTimezone: 'Europe/Berlin',
      defaultWeeklyTargetMinutes: 2400,
      mailFromName: 'Agentur Nord',
      mailReplyTo: 'office@nord.test',
    });
    const partial = await app.call('PATCH', api('/settings'), { session: ownerSession, body: { mailReplyTo: null } });
    expect(partial.body).toMatchObject({ name: 'Agentur Nord', defaultWeeklyTargetMinutes: 2400, mailReplyTo: null });
    const [audit] = await app.db
      .sql`select action, door, outcome, detail from ops_audit where workspace_id = ${ws.id} and action = 'settings.update' and outcome = 'succeeded' order by id limit 1`;
    expect(audit).toMatchObject({ action: 'settings.update', door: 'rest', outcome: 'succeeded' });
  });

  it('refuse what is not valid, each with its reason', async () => {
    const send = (body: unknown) => app.call('PATCH', api('/settings'), { session: ownerSession, body });
    const tz = await send({ defaultTimezone: 'Mars/Olympus' });
    expect([tz.status, tz.body.error.details]).toEqual([400, { reason: 'unknown_timezone', field: 'defaultTimezone' }]);
    for (const bad of ['a@b.test, c@d.test', 'Office <office@nord.test>', 'nope']) {
      const r = await send({ mailReplyTo: bad });
      expect([r.status, r.body.error.details], bad).toEqual([400, { reason: 'bad_address', field: 'mailReplyTo' }]);
    }
    const header = await send({ mailFromName: 'Nord\u0085Bcc' });
    expect([header.status, header.body.error.details]).toMatchObject([400, { reason: 'validation', field: 'mailFromName' }]);
    const target = await send({ defaultWeeklyTargetMinutes: 10_081 });
    expect([target.status, target.body.error.details]).toMatchObject([400, { reason: 'validation', field: 'defaultWeeklyTargetMinutes' }]);
    const memberSession = await login(app, member.email, member.password);
    const byMember = await app.call('GET', api('/settings'), { session: memberSession });
    expect([byMember.status, reason(byMember)]).toEqual([403, 'admin_only']);
  });
});

describe('deactivating a member', () => {
  it('ends their sessions and tokens at once, keeps their time, tickets and name, and can be undone', async () => {
    const sql = app.db.sql;
    const leaver = await makeUser(sql, ws, { role: 'member', name: 'Lea Leaver' });
    const project = await makeProject(sql, ws, { members: [{ person: leaver }] });
    const ticket = await makeTicket(sql, ws, { projectId: project.id, reporterId: leaver.id, assigneeId: leaver.id });
    await makePeriod(sql, ws, { start: '2026-01-01', end: '2026-01-31' });
    const entry = await makeTimeEntry(sql, ws, { ticketId: ticket.id, userId: leaver.id, spentOn: '2026-01-15', minutes: 30 });
    const session = await login(app, leaver.email, leaver.password);
    const { token } = await makeToken(sql, ws, leaver, { scopes: ['read'] });
    expect((await app.call('GET', api('/workflow'), { token })).status).toBe(200); // cached by the verifier now
    expect((await app.call('GET', api('/workflow'), { session })).status).toBe(200);

    const res = await app.call('POST', api(`/members/${leaver.id}/deactivate`), { session: adminSession });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ identityId: leaver.id, name: 'Lea Leaver', role: 'member', deactivatedAt: expect.any(String) });
    expect(await answers401({ token })).toBe(401);
    expect(await answers401({ session })).toBe(401);
    expect((await app.call('GET', '/api/auth/session', { session })).status).toBe(401); // no other workspace: the session is gone
    // history stays: the entry, the ticket's people, their name on it
    expect(await sql`select 1 from time_entries where id = ${entry.id}`).toHaveLength(1);
    const page = await app.call('GET', api(`/tickets/${ticket.humanId}`), { session: ownerSession });
    expect(page.status).toBe(200);
    expect(JSON.stringify(page.body)).toContain('Lea Leaver');
    expect(await sql`select 1 from project_memberships where identity_id = ${leaver.id}`).toHaveLength(1);
    // deactivating again changes nothing
    expect((await app.call('POST', api(`/members/${leaver.id}/deactivate`), { session: ownerSession })).status).toBe(200);

    const back = await app.call('POST', api(`/members/${leaver.id}/reactivate`), { session: ownerSession });
    expect([back.status, back.body.deactivatedAt]).toEqual([200, null]);
    const again = await login(app, leaver.email, leaver.password);
    expect((await app.call('GET', api('/workflow'), { session: again })).status).toBe(200);
    // a revoked token stays revoked: a new one is made
    expect((await app.call('GET', api('/workflow'), { token })).status).toBe(401);
    const audit = await sql`select action, door, outcome from ops_audit where workspace_id = ${ws.id} and action like 'member.%activate' order by id`;
    expect(audit).toEqual([
      { action: 'member.deactivate', door: 'rest', outcome: 'succeeded' },
      { action: 'member.deactivate', door: 'rest', outcome: 'succeeded' },
      { action: 'member.reactivate', door: 'rest', outcome: 'succeeded' },
    ]);
  });

  it('keeps their other workspaces working', async () => {
    const sql = app.db.sql;
    const other = await makeWorkspace(sql);
    const both = await makeUser(sql, ws, { role: 'member' });
    await sql`insert into memberships (workspace_id, identity_id, role) values (${other.id}, ${both.id}, 'member')`;
    const session = await login(app, both.email, both.password);
    expect((await app.call('POST', api(`/members/${both.id}/deactivate`), { session: ownerSession })).status).toBe(200);
    expect((await app.call('GET', api('/workflow'), { session })).status).toBe(401);
    expect((await app.call('GET', `/api/w/${other.slug}/workflow`, { session })).status).toBe(200);
    const me = await app.call('GET', '/api/auth/session', { session });
    expect(me.body.workspaces.map((w: { slug: string }) => w.slug)).toEqual([other.slug]);
  });

  it('is refused for oneself, for an Owner by an Admin, for someone unknown, and for a member', async () => {
    const self = await app.call('POST', api(`/members/${admin.id}/deactivate`), { session: adminSession });
    expect([self.status, reason(self)]).toEqual([409, 'self_deactivation']);
    const theOwner = await app.call('POST', api(`/members/${owner.id}/deactivate`), { session: adminSession });
    expect([theOwner.status, reason(theOwner)]).toEqual([403, 'owner_only']);
    const reOwner = await app.call('POST', api(`/members/${owner.id}/reactivate`), { session: adminSession });
    expect([reOwner.status, reason(reOwner)]).toEqual([403, 'owner_only']);
    const unknown = await app.call('POST', api('/members/00000000-0000-4000-8000-000000000000/deactivate'), { session: ownerSession });
    expect([unknown.status, reason(unknown)]).toEqual([404, 'unknown_person']);
    const malformed = await app.call('POST', api('/members/nope/reactivate'), { session: ownerSession });
    expect([malformed.status, malformed.body.error.details]).toEqual([400, { reason: 'bad_uuid', field: 'identityId' }]);
    const memberSession = await login(app, member.email, member.password);
    const byMember = await app.call('POST', api(`/members/${admin.id}/deactivate`), { session: memberSession });
    expect([byMember.status, reason(byMember)]).toEqual([403, 'admin_only']);
    const audit = await app.db.sql`select outcome from ops_audit where workspace_id = ${ws.id} and action = 'member.deactivate' and outcome = 'refused'`;
    expect(audit.length).toBeGreaterThanOrEqual(2);
  });
});
