import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import {
  makeCategory,
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

/** PATCH and DELETE /categories/{id} (issue 22): rename, and delete refused while in use (409 in_use). */

let app: TestApp;
let ws: Workspace;
let owner: Person;
let member: Person;
let session: SessionCookie;
let memberSession: SessionCookie;
let clientSession: SessionCookie;
let adminToken: string;
let writeToken: string;

type Auth = { session?: SessionCookie; token?: string };
const W = () => `/api/w/${ws.slug}`;
const call = (method: string, path: string, body?: unknown, auth: Auth = { session }) => app.call(method, `${W()}${path}`, { ...auth, body });
const reasonOf = (res: { body: any }) => res.body?.error?.details?.reason;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  owner = await makeUser(sql, ws, { role: 'owner' });
  member = await makeUser(sql, ws, { role: 'member' });
  const [client] = await sql<{ id: string }[]>`insert into clients (workspace_id, name, code) values (${ws.id}, 'Acme', 'ACME') returning id`;
  const clientUser = await makeUser(sql, ws, { role: 'client_elevated', clientId: client!.id });
  session = await login(app, owner.email, owner.password);
  memberSession = await login(app, member.email, member.password);
  clientSession = await login(app, clientUser.email, clientUser.password);
  adminToken = (await makeToken(sql, ws, owner, { scopes: ['admin'] })).token;
  writeToken = (await makeToken(sql, ws, owner, { scopes: ['read', 'write'] })).token;
});
afterAll(() => app.close());

describe('PATCH /categories/{id}', () => {
  it('renames; GET /categories shows the new name; audited', async () => {
    const c = await makeCategory(app.db.sql, ws, 'Dev');
    const res = await call('PATCH', `/categories/${c.id}`, { name: '  Senior developer ' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: c.id, name: 'Senior developer' });
    expect((await call('GET', '/categories')).body.categories).toContainEqual({ id: c.id, name: 'Senior developer' });
    const [audit] = await app.db.sql`select target, detail, door from ops_audit where workspace_id = ${ws.id} and action = 'categories.update'`;
    expect(audit).toMatchObject({ target: c.id, detail: 'Senior developer', door: 'rest' });
  });

  it('a change of case of its own name is allowed; another category’s name, in any case, is 409 category_exists', async () => {
    const a = await makeCategory(app.db.sql, ws, 'Design');
    await makeCategory(app.db.sql, ws, 'Research');
    expect((await call('PATCH', `/categories/${a.id}`, { name: 'DESIGN' })).status).toBe(200);
    const res = await call('PATCH', `/categories/${a.id}`, { name: 'research' });
    expect(res.status).toBe(409);
    expect(res.body.error.details).toMatchObject({ reason: 'category_exists', field: 'name' });
  });

  it('refusals: unknown 404 unknown_category, another workspace’s 404, bad id 400, empty name 400, member 403, write token 403, admin token 200', async () => {
    const c = await makeCategory(app.db.sql, ws);
    const foreign = await makeCategory(app.db.sql, await makeWorkspace(app.db.sql));
    for (const id of [randomUUID(), foreign.id]) {
      const res = await call('PATCH', `/categories/${id}`, { name: 'X' });
      expect(res.status).toBe(404);
      expect(reasonOf(res)).toBe('unknown_category');
    }
    expect(reasonOf(await call('PATCH', '/categories/x', { name: 'X' }))).toBe('bad_uuid');
    expect(reasonOf(await call('PATCH', `/categories/${c.id}`, { name: ' ' }))).toBe('validation');
    expect(reasonOf(await call('PATCH', `/categories/${c.id}`, { name: 'x'.repeat(101) }))).toBe('validation');
    expect(reasonOf(await call('PATCH', `/categories/${c.id}`, { name: 'X' }, { session: memberSession }))).toBe('admin_only');
    expect(reasonOf(await call('PATCH', `/categories/${c.id}`, { name: 'X' }, { session: clientSession }))).toBe('workspace_users_only');
    expect(reasonOf(await call('PATCH', `/categories/${c.id}`, { name: 'X' }, { token: writeToken }))).toBe('missing_scope');
    expect((await call('PATCH', `/categories/${c.id}`, { name: `By token ${randomUUID()}` }, { token: adminToken })).status).toBe(200);
  });
});

describe('DELETE /categories/{id}', () => {
  it('deletes an unused category', async () => {
    const c = await makeCategory(app.db.sql, ws);
    const res = await call('DELETE', `/categories/${c.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expect((await call('GET', '/categories')).body.categories.map((x: { id: string }) => x.id)).not.toContain(c.id);
    expect(reasonOf(await call('DELETE', `/categories/${c.id}`))).toBe('unknown_category');
  });

  it('in use by a time entry, a person’s default or a project membership: 409 in_use with the counts, and it stays', async () => {
    const today = new Date().toISOString().slice(0, 10);
    await makePeriod(app.db.sql, ws, { start: today, end: today });
    const project = await makeProject(app.db.sql, ws, { members: [{ person: member }] });
    const ticket = await makeTicket(app.db.sql, ws, { projectId: project.id });

    const byEntry = await makeCategory(app.db.sql, ws);
    const entry = await makeTimeEntry(app.db.sql, ws, { ticketId: ticket.id, userId: member.id, spentOn: today, minutes: 10 });
    await app.db.sql`update time_entries set category_id = ${byEntry.id} where id = ${entry.id}`;
    const res = await call('DELETE', `/categories/${byEntry.id}`);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'conflict', details: { reason: 'in_use', entries: 1, members: 0, projectMembers: 0 } });

    const byDefault = await makeCategory(app.db.sql, ws);
    expect((await call('PATCH', `/members/${member.id}`, { categoryId: byDefault.id })).status).toBe(200);
    expect((await call('DELETE', `/categories/${byDefault.id}`)).body.error.details).toMatchObject({ reason: 'in_use', members: 1 });

    const byProject = await makeCategory(app.db.sql, ws);
    expect((await call('PUT', `/projects/${project.id}/members/${member.id}`, { access: 'full', categoryId: byProject.id })).status).toBe(200);
    expect((await call('DELETE', `/categories/${byProject.id}`)).body.error.details).toMatchObject({ reason: 'in_use', projectMembers: 1 });

    const ids = (await call('GET', '/categories')).body.categories.map((x: { id: string }) => x.id);
    expect(ids).toEqual(expect.arrayContaining([byEntry.id, byDefault.id, byProject.id]));

    // once nothing names it, it goes
    expect((await call('PUT', `/projects/${project.id}/members/${member.id}`, { access: 'full', categoryId: null })).status).toBe(200);
    expect((await call('DELETE', `/categories/${byProject.id}`)).status).toBe(200);
  });

  it('refusals: unknown 404, bad id 400, member 403 admin_only, client 403 workspace_users_only, write token 403 missing_scope', async () => {
    const c = await makeCategory(app.db.sql, ws);
    expect(reasonOf(await call('DELETE', `/categories/${randomUUID()}`))).toBe('unknown_category');
    expect(reasonOf(await call('DELETE', '/categories/nope'))).toBe('bad_uuid');
    expect(reasonOf(await call('DELETE', `/categories/${c.id}`, undefined, { session: memberSession }))).toBe('admin_only');
    expect(reasonOf(await call('DELETE', `/categories/${c.id}`, undefined, { session: clientSession }))).toBe('workspace_users_only');
    expect(reasonOf(await call('DELETE', `/categories/${c.id}`, undefined, { token: writeToken }))).toBe('missing_scope');
    expect((await call('DELETE', `/categories/${c.id}`, undefined, { token: adminToken })).status).toBe(200);
  });
});
