import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { cleanEnv, runToEnd } from './helpers/spawn.ts';
import {
  makeCategory,
  makeClient,
  makePeriod,
  makeProject,
  makeTicket,
  makeTimeEntry,
  makeToken,
  makeUser,
  makeWorkspace,
  type Person,
  type Workspace,
} from './helpers/factories.ts';

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

/** Polls (bounded by the issue's ten seconds) until `path` answers 401 for this credential. */
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

describe('PATCH /members/{identityId}', () => {
  const patch = (id: string, body: unknown, opts: { session?: SessionCookie; token?: string } = { session: ownerSession }) =>
    app.call('PATCH', api(`/members/${id}`), { ...opts, body });

  it('changes role, client and time settings together; a client role drops the billing-operator flag and project memberships', async () => {
    const sql = app.db.sql;
    const person = await makeUser(sql, ws, { role: 'member' });
    const category = await makeCategory(sql, ws);
    const project = await makeProject(sql, ws, { members: [{ person }] });
    await sql`update memberships set billing_operator = true where identity_id = ${person.id}`;
    const settings = await patch(person.id, { timezone: 'Europe/Paris', weeklyTargetMinutes: 1200, categoryId: category.id, role: 'admin' });
    expect(settings.status).toBe(200);
    expect(settings.body).toMatchObject({
      identityId: person.id,
      role: 'admin',
      clientId: null,
      timezone: 'Europe/Paris',
      weeklyTargetMinutes: 1200,
      categoryId: category.id,
      billingOperator: true,
    });
    const client = await makeClient(sql, ws, { name: 'Umbrella' });
    const toClient = await patch(person.id, { role: 'client', clientId: client.id });
    expect(toClient.body).toMatchObject({ role: 'client', clientId: client.id, billingOperator: false });
    expect(await sql`select 1 from project_memberships where identity_id = ${person.id} and project_id = ${project.id}`).toHaveLength(0);
    // between client roles the client stays; back to a workspace role it goes
    expect((await patch(person.id, { role: 'client_elevated' })).body).toMatchObject({ role: 'client_elevated', clientId: client.id });
    expect((await patch(person.id, { role: 'member' })).body).toMatchObject({ role: 'member', clientId: null });
    const audit =
      await sql`select detail from ops_audit where workspace_id = ${ws.id} and action = 'member.role' and target = ${`identity ${person.id}`} order by id`;
    expect(audit.map((a) => a.detail)).toEqual([
      'member -> admin',
      `admin -> client (client ${client.id})`,
      `client -> client_elevated (client ${client.id})`,
      'client_elevated -> member',
    ]);
  });

  it('lets a member change their own time settings but nothing else, and takes an admin-scoped token', async () => {
    const self = await makeUser(app.db.sql, ws, { role: 'member' });
    const session = await login(app, self.email, self.password);
    expect((await patch(self.id, { timezone: 'Asia/Tokyo' }, { session })).body).toMatchObject({ timezone: 'Asia/Tokyo', role: 'member' });
    const promote = await patch(self.id, { role: 'admin' }, { session });
    expect([promote.status, reason(promote)]).toEqual([403, 'admin_only']);
    const same = await patch(self.id, { role: 'member' }, { session });
    expect([same.status, reason(same)]).toEqual([403, 'admin_only']);
    const other = await patch(admin.id, { timezone: 'UTC' }, { session });
    expect([other.status, reason(other)]).toEqual([403, 'admin_only']);
    const category = await patch(self.id, { categoryId: null }, { session });
    expect([category.status, category.body.error.details]).toEqual([403, { reason: 'admin_only', field: 'categoryId' }]);
    const { token: readWrite } = await makeToken(app.db.sql, ws, self, { scopes: ['read', 'write', 'triage'] });
    const noScope = await patch(self.id, { timezone: 'UTC' }, { token: readWrite });
    expect([noScope.status, noScope.body.error.details]).toEqual([403, { reason: 'missing_scope', scope: 'admin' }]);
    const { token: provisioning } = await makeToken(app.db.sql, ws, owner, { scopes: ['admin'] });
    expect((await patch(self.id, { weeklyTargetMinutes: 600 }, { token: provisioning })).body).toMatchObject({ weeklyTargetMinutes: 600 });
  });

  it('keeps Owners to Owners and always one of them, and refuses what does not fit', async () => {
    const sql = app.db.sql;
    const second = await makeUser(sql, ws, { role: 'member' });
    const byAdmin = await patch(second.id, { role: 'owner' }, { session: adminSession });
    expect([byAdmin.status, byAdmin.body.error.details]).toEqual([403, { reason: 'owner_only', field: 'role' }]);
    const demoteOwner = await patch(owner.id, { role: 'member' }, { session: adminSession });
    expect([demoteOwner.status, reason(demoteOwner)]).toEqual([403, 'owner_only']);
    const last = await patch(owner.id, { role: 'admin' });
    expect([last.status, last.body.error.details]).toEqual([409, { reason: 'last_owner', field: 'role' }]);
    expect((await patch(second.id, { role: 'owner' })).body.role).toBe('owner');
    expect((await patch(second.id, { role: 'member' })).body.role).toBe('member');
    const noClient = await patch(second.id, { role: 'client' });
    expect([noClient.status, noClient.body.error.details]).toEqual([400, { reason: 'client_role_needs_client', field: 'clientId' }]);
    const unknownClient = await patch(second.id, { role: 'client', clientId: '00000000-0000-4000-8000-000000000000' });
    expect([unknownClient.status, unknownClient.body.error.details]).toEqual([404, { reason: 'unknown_client', field: 'clientId' }]);
    const unknown = await patch('00000000-0000-4000-8000-000000000000', { role: 'member' });
    expect([unknown.status, reason(unknown)]).toEqual([404, 'unknown_person']);
    const badRole = await patch(second.id, { role: 'superuser' });
    expect([badRole.status, badRole.body.error.details]).toMatchObject([400, { reason: 'validation', field: 'role' }]);
    const tz = await patch(second.id, { timezone: 'Nowhere/Land', role: 'admin' });
    expect([tz.status, tz.body.error.details]).toEqual([400, { reason: 'unknown_timezone', field: 'timezone' }]);
    // one transaction: the refused time zone left the role as it was
    expect((await sql`select role from memberships where identity_id = ${second.id}`)[0]!.role).toBe('member');
  });
});

describe('GET /people', () => {
  it('filters by role, client and text, within what the caller may see, and marks deactivated people', async () => {
    const sql = app.db.sql;
    const client = await makeClient(sql, ws, { name: 'Initech' });
    const peter = await makeUser(sql, ws, { role: 'client', clientId: client.id, name: 'Peter Gibbons' });
    await makeProject(sql, ws, { billingClientId: client.id });
    const gone = await makeUser(sql, ws, { role: 'member', name: 'Gone Member' });
    await sql`update memberships set deactivated_at = now() where identity_id = ${gone.id}`;
    const list = (query: string, session = ownerSession) => app.call('GET', api(`/people?${query}`), { session });
    const byClient = await list(`clientId=${client.id}`);
    expect(byClient.body.people.map((p: { id: string }) => p.id)).toEqual([peter.id]);
    expect(byClient.body.people[0]).toMatchObject({ role: 'client', client: { id: client.id, name: 'Initech' }, deactivated: false });
    const owners = await list('role=owner');
    expect(owners.body.people.every((p: { role: string }) => p.role === 'owner')).toBe(true);
    const text = await list('q=gone');
    expect(text.body.people).toEqual([expect.objectContaining({ id: gone.id, deactivated: true })]);
    const limited = await list('limit=1');
    expect([limited.body.people.length, limited.body.omitted > 0]).toEqual([1, true]);
    const badRole = await list('role=root');
    expect([badRole.status, badRole.body.error.details]).toMatchObject([400, { reason: 'validation', field: 'role' }]);
    const badLimit = await list('limit=1000');
    expect([badLimit.status, badLimit.body.error.details]).toMatchObject([400, { reason: 'validation', field: 'limit' }]);
    // a client user sees their own client's people only, whatever the filter asks
    const peterSession = await login(app, peter.email, peter.password);
    const asPeter = await list('role=owner', peterSession);
    expect([asPeter.status, asPeter.body.people]).toEqual([200, []]);
    const { token } = await makeToken(sql, ws, member, { scopes: ['write'] });
    const noRead = await app.call('GET', api('/people'), { token });
    expect([noRead.status, noRead.body.error.details]).toEqual([403, { reason: 'missing_scope', scope: 'read' }]);
  });
});

describe('wt member set', () => {
  it('calls the same operation as the CLI principal', async () => {
    const wt = (...args: string[]) => runToEnd('node', [path.resolve('bin/wt.js'), ...args], cleanEnv({ DATABASE_URL: app.db.url, LOG_LEVEL: 'silent' }));
    const person = await makeUser(app.db.sql, ws, { role: 'member' });
    const client = await makeClient(app.db.sql, ws, { name: 'Hooli' });
    const ok = await wt('member', 'set', '--workspace', ws.slug, '--email', person.email, '--role', 'client', '--client', client.code);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ identityId: person.id, role: 'client', clientId: client.id });
    const back = await wt(
      'member',
      'set',
      '--workspace',
      ws.slug,
      '--email',
      person.email,
      '--role',
      'member',
      '--timezone',
      'Europe/Rome',
      '--weekly-target',
      '2100',
    );
    expect(back.code, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout)).toMatchObject({ role: 'member', clientId: null, timezone: 'Europe/Rome', weeklyTargetMinutes: 2100 });
    const refused = await wt('member', 'set', '--workspace', ws.slug, '--email', owner.email, '--role', 'member');
    expect([refused.code, refused.stderr]).toEqual([2, expect.stringContaining('at least one active owner')]);
    const [audit] = await app.db.sql`select door from ops_audit where action = 'member.role' and target = ${`identity ${person.id}`} order by id limit 1`;
    expect(audit).toEqual({ door: 'cli' });
  });
});
