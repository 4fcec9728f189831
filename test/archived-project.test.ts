import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { mcpSession, type McpSession } from './helpers/mcp.ts';

// An archived project keeps its tickets readable and editable but takes no new ones: neither
// created in it nor moved into it (409 project_archived) until it is restored.
let app: TestApp;
let ws: Workspace;
let owner: Person;
let member: Person;
let ownerSession: SessionCookie;
let token: string;
let s: McpSession;
let closed: { id: string; key: string };
let open: { id: string; key: string };
let kept: { id: string; humanId: string };

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  owner = await makeUser(sql, ws, { role: 'owner' });
  member = await makeUser(sql, ws);
  closed = await makeProject(sql, ws, { members: [{ person: member }] });
  open = await makeProject(sql, ws, { members: [{ person: member }] });
  kept = await makeTicket(sql, ws, { projectId: closed.id, title: 'Kept' });
  ownerSession = await login(app, owner.email, owner.password);
  const archived = await app.call('POST', `/api/w/${ws.slug}/projects/${closed.id}/archive`, { session: ownerSession, body: { archived: true } });
  expect(archived.status, JSON.stringify(archived.body)).toBe(200);
  token = (await makeToken(sql, ws, member, { scopes: ['read', 'write', 'triage'] })).token;
  s = await mcpSession(app, token);
});
afterAll(async () => {
  await s.close();
  await app.close();
});

const api = (method: string, path: string, body?: unknown) => app.call(method, `/api/w/${ws.slug}${path}`, { token, body });
const count = async () => (await app.db.sql<{ n: number }[]>`select count(*)::int as n from tickets where project_id = ${closed.id}`)[0]!.n;

describe('an archived project takes no new tickets', () => {
  it('POST /tickets into it: 409 project_archived, nothing created (Owner too)', async () => {
    const before = await count();
    const res = await api('POST', '/tickets', { projectId: closed.id, title: 'New' });
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'conflict', details: { reason: 'project_archived', projectId: closed.id } });
    const asOwner = await app.call('POST', `/api/w/${ws.slug}/tickets`, { session: ownerSession, body: { projectId: closed.id, title: 'New' } });
    expect(asOwner.status, JSON.stringify(asOwner.body)).toBe(409);
    expect(await count()).toBe(before);
  });

  it('MCP create_ticket into it: project_archived', async () => {
    expect(await s.fail('create_ticket', { project: closed.key, title: 'New' })).toMatchObject({ code: 'conflict', reason: 'project_archived' });
  });

  it('moving a ticket into it, from a project or out of the Inbox: 409 project_archived, the ticket stays', async () => {
    for (const from of [open.id, null]) {
      const t = await makeTicket(app.db.sql, ws, { projectId: from });
      const res = await api('POST', `/tickets/${t.id}/move`, { projectId: closed.id });
      expect(res.status, JSON.stringify(res.body)).toBe(409);
      expect(res.body.error.details).toMatchObject({ reason: 'project_archived' });
      expect((await app.db.sql`select project_id from tickets where id = ${t.id}`)[0]!.project_id).toBe(from);
    }
  });

  it('its own tickets stay readable and editable', async () => {
    expect((await api('GET', `/tickets/${kept.humanId}`)).status).toBe(200);
    const patched = await api('PATCH', `/tickets/${kept.humanId}`, { title: 'Kept and edited' });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const comment = await api('POST', `/tickets/${kept.humanId}/comments`, { body: 'still here' });
    expect(comment.status, JSON.stringify(comment.body)).toBe(201);
  });

  it('restored, it takes tickets again', async () => {
    const restored = await app.call('POST', `/api/w/${ws.slug}/projects/${closed.id}/archive`, { session: ownerSession, body: { archived: false } });
    expect(restored.status).toBe(200);
    const res = await api('POST', '/tickets', { projectId: closed.id, title: 'After restore' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });
});
