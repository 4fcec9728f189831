import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type TestApp } from './helpers/app.ts';
import { makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { mcpSession, type McpSession } from './helpers/mcp.ts';

// A deactivated member keeps their name on history, but no lookup offers them as a new assignee,
// mention or viewer: by name (MCP) or by id (REST) they are an unknown person.
let app: TestApp;
let ws: Workspace;
let member: Person;
let gone: Person;
let web: { id: string; key: string };
let other: { id: string; key: string };
let token: string;
let s: McpSession;
let history: { id: string; humanId: string };

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  await makeUser(sql, ws, { role: 'owner' });
  member = await makeUser(sql, ws, { name: 'Mia Member' });
  gone = await makeUser(sql, ws, { name: 'Dora Gone' });
  web = await makeProject(sql, ws, { members: [{ person: member }, { person: gone }] });
  other = await makeProject(sql, ws, { members: [{ person: member }, { person: gone }] });
  history = await makeTicket(sql, ws, { projectId: web.id, title: 'Assigned before', assigneeId: gone.id });
  await sql`update memberships set deactivated_at = now() where workspace_id = ${ws.id} and identity_id = ${gone.id}`;
  token = (await makeToken(sql, ws, member)).token;
  s = await mcpSession(app, token);
});
afterAll(async () => {
  await s.close();
  await app.close();
});

const api = (method: string, path: string, body?: unknown) => app.call(method, `/api/w/${ws.slug}${path}`, { token, body });

describe('MCP: names do not resolve to a deactivated member', () => {
  it('create_ticket with a deactivated assignee by name or email: 400 unknown_person, not offered as a choice', async () => {
    for (const assignee of ['Dora Gone', gone.email]) {
      const e = await s.fail('create_ticket', { project: web.key, title: 'x', assignee });
      expect(e).toMatchObject({ code: 'invalid', reason: 'unknown_person', details: { field: 'assignee' } });
      expect((e.details.choices ?? []).map((c: any) => c.id)).not.toContain(gone.id);
    }
  });

  it('add_comment mentioning a deactivated member by name: unknown_person', async () => {
    expect(await s.fail('add_comment', { ticket: history.humanId, body: 'hi @Dora', mentions: ['Dora Gone'] })).toMatchObject({
      reason: 'unknown_person',
      details: { field: 'mentions.0' },
    });
  });

  it('a filter over past work still finds their tickets by name', async () => {
    const found = await s.ok('search_tickets', { assignee: 'Dora Gone' });
    expect(found.items.map((t: any) => t.id)).toEqual([history.id]);
  });
});

describe('REST: ids of a deactivated member', () => {
  it('as assignee on create, update and move: 400 unknown_person on assigneeId', async () => {
    const created = await api('POST', '/tickets', { projectId: web.id, title: 'x', assigneeId: gone.id });
    expect(created.status, JSON.stringify(created.body)).toBe(400);
    expect(created.body.error.details).toMatchObject({ reason: 'unknown_person', field: 'assigneeId' });

    const t = await makeTicket(app.db.sql, ws, { projectId: web.id });
    const patched = await api('PATCH', `/tickets/${t.humanId}`, { assigneeId: gone.id });
    expect(patched.status, JSON.stringify(patched.body)).toBe(400);
    expect(patched.body.error.details).toMatchObject({ reason: 'unknown_person', field: 'assigneeId' });

    const moved = await api('POST', `/tickets/${t.humanId}/move`, { projectId: other.id, assigneeId: gone.id });
    expect(moved.status, JSON.stringify(moved.body)).toBe(400);
    expect(moved.body.error.details).toMatchObject({ reason: 'unknown_person', field: 'assigneeId' });
    expect((await app.db.sql`select assignee_id, project_id from tickets where id = ${t.id}`)[0]).toEqual({ assignee_id: null, project_id: web.id });
  });

  it('as a viewer or a mention: 404 unknown_person', async () => {
    // adding viewers needs a browser session
    const session = await login(app, member.email, member.password);
    const viewer = await app.call('POST', `/api/w/${ws.slug}/tickets/${history.humanId}/viewers`, { session, body: { identityIds: [gone.id] } });
    expect(viewer.status, JSON.stringify(viewer.body)).toBe(404);
    expect(viewer.body.error.details).toMatchObject({ reason: 'unknown_person', identityId: gone.id });
    const mention = await api('POST', `/tickets/${history.humanId}/comments`, { body: 'hi', mentions: [gone.id] });
    expect(mention.status, JSON.stringify(mention.body)).toBe(404);
    expect(mention.body.error.details).toMatchObject({ reason: 'unknown_person' });
  });

  it('history stays: the ticket shows their name, stays editable, and resending them as assignee keeps them', async () => {
    const page = await api('GET', `/tickets/${history.humanId}`);
    expect(page.status).toBe(200);
    expect(JSON.stringify(page.body)).toContain('Dora Gone');
    const edit = await api('PATCH', `/tickets/${history.humanId}`, { title: 'Still editable', assigneeId: gone.id });
    expect(edit.status, JSON.stringify(edit.body)).toBe(200);
    expect((await app.db.sql`select assignee_id, title from tickets where id = ${history.id}`)[0]).toEqual({
      assignee_id: gone.id,
      title: 'Still editable',
    });
  });
});
