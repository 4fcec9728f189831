import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type TestApp } from './helpers/app.ts';
import { makeClient, makePeriod, makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { mcpSession } from './helpers/mcp.ts';

// Issue 9, defects 2 and 13: GET /changes shows exactly what the caller's timeline shows, a
// `gone` names the ticket as the caller last saw it, and a deletion arrives as `deleted`.

let app: TestApp;
let ws: Workspace;
let admin: Person;
let member: Person;
let elevated: Person;
let tokens: Record<'admin' | 'member' | 'elevated', string>;
let clientProject: { id: string; key: string };
let internal: { id: string; key: string };
let secret: { id: string; key: string };

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  admin = await makeUser(sql, ws, { role: 'admin' });
  member = await makeUser(sql, ws, { role: 'member' });
  const client = await makeClient(sql, ws);
  elevated = await makeUser(sql, ws, { role: 'client_elevated', clientId: client.id });
  clientProject = await makeProject(sql, ws, { billingClientId: client.id, members: [{ person: member }] });
  internal = await makeProject(sql, ws, { members: [{ person: member }] });
  secret = await makeProject(sql, ws, { key: 'SECRET' });
  tokens = {
    admin: (await makeToken(sql, ws, admin)).token,
    member: (await makeToken(sql, ws, member)).token,
    elevated: (await makeToken(sql, ws, elevated)).token,
  };
  const today = new Date().toISOString().slice(0, 10);
  await makePeriod(sql, ws, { start: `${today.slice(0, 8)}01`, end: '2099-12-31' });
});
afterAll(() => app.close());

const api = (path: string) => `/api/w/${ws.slug}${path}`;
const ok = async (method: string, path: string, token: string, body?: unknown) => {
  const res = await app.call(method, api(path), { token, body });
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body;
};
const mark = async (token: string): Promise<number> => (await ok('GET', '/changes?after=0&limit=500', token)).nextAfter;
const feed = async (token: string, after: number) =>
  (await ok('GET', `/changes?after=${after}&limit=500`, token)).changes as { ticketId: string; humanId: string; kind: string }[];

describe('GET /changes follows the timeline', () => {
  it('reports exactly the events the caller’s ticket page shows: no internal comment, time, billing field or hidden link to a client', async () => {
    const sql = app.db.sql;
    const t = await makeTicket(sql, ws, { projectId: clientProject.id, title: 'Shared with the client' });
    const hidden = await makeTicket(sql, ws, { projectId: secret.id });
    const from = { admin: await mark(tokens.admin), member: await mark(tokens.member), elevated: await mark(tokens.elevated) };

    await ok('POST', `/tickets/${t.id}/comments`, tokens.admin, { body: 'internal only', audience: 'internal' });
    await ok('POST', `/tickets/${t.id}/comments`, tokens.admin, { body: 'for the client', audience: 'client' });
    await ok('POST', '/time', tokens.member, { ticketId: t.id, spentOn: new Date().toISOString().slice(0, 10), minutes: 30 });
    await ok('PATCH', `/tickets/${t.id}`, tokens.admin, { billingDescription: 'Retainer work' });
    await ok('POST', `/tickets/${t.id}/links`, tokens.admin, { targetId: hidden.id, kind: 'relates' });
    await ok('PATCH', `/tickets/${t.id}`, tokens.admin, { title: 'Shared with the client, renamed' });

    const kinds = async (who: keyof typeof tokens) => (await feed(tokens[who], from[who])).filter((c) => c.ticketId === t.id).map((c) => c.kind);
    const timeline = async (who: keyof typeof tokens) => ((await ok('GET', `/tickets/${t.id}`, tokens[who])).events as { kind: string }[]).map((e) => e.kind);

    expect(await kinds('elevated')).toEqual(['comment_added', 'field_changed']);
    expect(await kinds('member')).toEqual(['comment_added', 'comment_added', 'time_logged', 'field_changed', 'field_changed']);
    expect(await kinds('admin')).toEqual(['comment_added', 'comment_added', 'time_logged', 'field_changed', 'link_added', 'field_changed']);
    for (const who of ['admin', 'member', 'elevated'] as const) expect(await kinds(who), who).toEqual(await timeline(who));

    // list_changes (MCP) answers what GET /changes answers.
    const s = await mcpSession(app, tokens.elevated);
    try {
      expect(await s.ok('list_changes', { after: from.elevated, limit: 500 })).toEqual(
        await ok('GET', `/changes?after=${from.elevated}&limit=500`, tokens.elevated),
      );
    } finally {
      await s.close();
    }
  });

  it('a gone after a move out of sight names the ticket as the caller last saw it, even when the same request changes the assignee', async () => {
    const sql = app.db.sql;
    const other = await makeUser(sql, ws, { role: 'member' });
    const plain = await makeTicket(sql, ws, { projectId: internal.id });
    const assigned = await makeTicket(sql, ws, { projectId: internal.id, assigneeId: member.id });
    const from = await mark(tokens.member);

    await ok('POST', `/tickets/${plain.id}/move`, tokens.admin, { projectId: secret.id });
    // Moved away and unassigned at once: the caller could see it as a project member and as assignee.
    await ok('POST', `/tickets/${assigned.id}/move`, tokens.admin, { projectId: secret.id, assigneeId: other.id });

    const changes = await feed(tokens.member, from);
    expect(changes.filter((c) => c.ticketId === plain.id)).toEqual([expect.objectContaining({ kind: 'gone', humanId: plain.humanId })]);
    expect(changes.filter((c) => c.ticketId === assigned.id)).toEqual([expect.objectContaining({ kind: 'gone', humanId: assigned.humanId })]);
    expect(JSON.stringify(changes)).not.toContain('SECRET-');
  });

  it('a deleted ticket arrives as deleted to whoever could see it, the owner included, and not at all to others', async () => {
    const sql = app.db.sql;
    const seen = await makeTicket(sql, ws, { projectId: internal.id });
    const unseen = await makeTicket(sql, ws, { projectId: secret.id });
    const from = { admin: await mark(tokens.admin), member: await mark(tokens.member) };

    const session = await login(app, admin.email, admin.password);
    expect((await app.call('POST', '/api/auth/reauth', { session, body: { password: admin.password } })).status).toBe(200);
    for (const t of [seen, unseen]) expect((await app.call('DELETE', api(`/tickets/${t.id}`), { session })).status).toBe(200);

    const adminFeed = await feed(tokens.admin, from.admin);
    expect(adminFeed.filter((c) => c.ticketId === seen.id)).toEqual([expect.objectContaining({ kind: 'deleted', humanId: seen.humanId })]);
    expect(adminFeed.filter((c) => c.ticketId === unseen.id)).toEqual([expect.objectContaining({ kind: 'deleted', humanId: unseen.humanId })]);
    const memberFeed = await feed(tokens.member, from.member);
    expect(memberFeed.filter((c) => c.ticketId === seen.id)).toEqual([expect.objectContaining({ kind: 'deleted', humanId: seen.humanId })]);
    expect(memberFeed.some((c) => c.ticketId === unseen.id)).toBe(false);
  });
});
