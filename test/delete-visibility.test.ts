import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type CallResult, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makeClient, makeProject, makeTicket, makeUser, makeWorkspace, type Workspace } from './helpers/factories.ts';

/**
 * DELETE, redact and archive resolve visibility before any role check: a ticket the caller may
 * not see, or one that does not exist, is 404 `not_found` for everyone, never 403.
 */

let app: TestApp;
let ws: Workspace;
let project: { id: string; key: string };
let hiddenProject: { id: string; key: string };
let sessions: Record<'member' | 'client' | 'staleAdmin', SessionCookie>;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  const acme = await makeClient(sql, ws, { name: 'Acme' });
  const member = await makeUser(sql, ws, { role: 'member' });
  const client = await makeUser(sql, ws, { role: 'client', clientId: acme.id });
  const admin = await makeUser(sql, ws, { role: 'admin' });
  project = await makeProject(sql, ws, { billingClientId: acme.id, members: [{ person: member }] });
  hiddenProject = await makeProject(sql, ws);
  sessions = {
    member: await login(app, member.email, member.password),
    client: await login(app, client.email, client.password),
    staleAdmin: await login(app, admin.email, admin.password),
  };
  await sql`update sessions set reauth_at = now() - interval '11 minutes' where csrf_token = ${sessions.staleAdmin.csrfToken}`;
});
afterAll(() => app.close());

const base = () => `/api/w/${ws.slug}/tickets`;
const del = (ref: string, session: SessionCookie) => app.call('DELETE', `${base()}/${ref}`, { session });
const redact = (id: string, session: SessionCookie) => app.call('POST', `${base()}/${id}/redact`, { session, body: { reason: 'privacy request' } });
const archive = (ref: string, session: SessionCookie) => app.call('POST', `${base()}/${ref}/archive`, { session, body: { archived: true } });

function expectError(res: CallResult, status: number, code: string, reason?: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
  if (reason) expect(res.body.error.details?.reason).toBe(reason);
}

async function unchanged(id: string, title: string): Promise<void> {
  const [row] = await app.db.sql<{ title: string; archived: boolean }[]>`select title, archived from tickets where id = ${id}`;
  expect(row).toEqual({ title, archived: false });
}

describe('hidden or unknown is 404 before any role check', () => {
  it('a member: DELETE, redact and archive of a ticket in a project they are not in are 404', async () => {
    const hidden = await makeTicket(app.db.sql, ws, { projectId: hiddenProject.id, title: 'hidden one' });
    for (const ref of [hidden.humanId, hidden.id]) expectError(await del(ref, sessions.member), 404, 'not_found');
    expectError(await redact(hidden.id, sessions.member), 404, 'not_found');
    expectError(await archive(hidden.humanId, sessions.member), 404, 'not_found');
    await unchanged(hidden.id, 'hidden one');
  });

  it('a member: unknown tickets are 404', async () => {
    expectError(await del(randomUUID(), sessions.member), 404, 'not_found');
    expectError(await del(`${project.key}-424242`, sessions.member), 404, 'not_found');
    expectError(await redact(randomUUID(), sessions.member), 404, 'not_found');
    expectError(await archive(randomUUID(), sessions.member), 404, 'not_found');
  });

  it('a client user: a ticket of their own client they are not on is 404', async () => {
    const other = await makeTicket(app.db.sql, ws, { projectId: project.id, title: 'not theirs' });
    expectError(await del(other.id, sessions.client), 404, 'not_found');
    expectError(await redact(other.id, sessions.client), 404, 'not_found');
    expectError(await archive(other.id, sessions.client), 404, 'not_found');
    await unchanged(other.id, 'not theirs');
  });

  it('an admin without a recent re-authentication: unknown is 404, a real ticket reauth_required', async () => {
    expectError(await del(randomUUID(), sessions.staleAdmin), 404, 'not_found');
    expectError(await redact(randomUUID(), sessions.staleAdmin), 404, 'not_found');
    const t = await makeTicket(app.db.sql, ws, { projectId: hiddenProject.id, title: 'kept' });
    expectError(await del(t.id, sessions.staleAdmin), 403, 'forbidden', 'reauth_required');
    expectError(await redact(t.id, sessions.staleAdmin), 403, 'forbidden', 'reauth_required');
    await unchanged(t.id, 'kept');
  });

  it('the role check still applies to a ticket the member can see', async () => {
    const visible = await makeTicket(app.db.sql, ws, { projectId: project.id, title: 'visible one' });
    expectError(await del(visible.humanId, sessions.member), 403, 'forbidden', 'admin_only');
    expectError(await redact(visible.id, sessions.member), 403, 'forbidden', 'admin_only');
    await unchanged(visible.id, 'visible one');
  });
});
