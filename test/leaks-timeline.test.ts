import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type TestApp } from './helpers/app.ts';
import { makeClient, makeLink, makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

// Issue 9, defect 3: timeline payloads name no ticket and no project the caller cannot see.

let app: TestApp;
let ws: Workspace;
let admin: Person;
let member: Person;
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
  const elevated = await makeUser(sql, ws, { role: 'client_elevated', clientId: client.id });
  clientProject = await makeProject(sql, ws, { key: 'CLNT', billingClientId: client.id, members: [{ person: member }] });
  internal = await makeProject(sql, ws, { key: 'INTRNL', members: [{ person: member }] });
  secret = await makeProject(sql, ws, { key: 'SECRET' });
  tokens = {
    admin: (await makeToken(sql, ws, admin)).token,
    member: (await makeToken(sql, ws, member)).token,
    elevated: (await makeToken(sql, ws, elevated)).token,
  };
});
afterAll(() => app.close());

const api = (path: string) => `/api/w/${ws.slug}${path}`;
const ok = async (method: string, path: string, token: string, body?: unknown) => {
  const res = await app.call(method, api(path), { token, body });
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body;
};
type Event = { kind: string; payload: Record<string, unknown> };
const events = async (ticketId: string, token: string, kind: string): Promise<Event[]> =>
  ((await ok('GET', `/tickets/${ticketId}`, token)).events as Event[]).filter((e) => e.kind === kind);

describe('timeline payloads', () => {
  it('parent_changed never names a parent the caller cannot see; a change between two hidden parents is left out', async () => {
    const sql = app.db.sql;
    const child = await makeTicket(sql, ws, { projectId: internal.id });
    const hiddenA = await makeTicket(sql, ws, { projectId: secret.id });
    const hiddenB = await makeTicket(sql, ws, { projectId: secret.id });
    const visible = await makeTicket(sql, ws, { projectId: internal.id });
    for (const parentId of [hiddenA.id, hiddenB.id, visible.id, null]) await ok('PUT', `/tickets/${child.id}/parent`, tokens.admin, { parentId });

    const seen = await events(child.id, tokens.member, 'parent_changed');
    expect(seen.map((e) => [e.payload.old, e.payload.new])).toEqual([
      [null, visible.id],
      [visible.id, null],
    ]);
    const page = JSON.stringify(await ok('GET', `/tickets/${child.id}`, tokens.member));
    expect(page).not.toContain(hiddenA.id);
    expect(page).not.toContain(hiddenB.id);
    // Whoever sees every ticket still reads the whole history.
    expect((await events(child.id, tokens.admin, 'parent_changed')).map((e) => [e.payload.old, e.payload.new])).toEqual([
      [null, hiddenA.id],
      [hiddenA.id, hiddenB.id],
      [hiddenB.id, visible.id],
      [visible.id, null],
    ]);
  });

  it('moved shows a client only the projects of its client; a token only the projects of its allow-list', async () => {
    const sql = app.db.sql;
    const t = await makeTicket(sql, ws, { projectId: internal.id });
    const moved = await ok('POST', `/tickets/${t.id}/move`, tokens.admin, { projectId: clientProject.id });

    const [forClient] = await events(t.id, tokens.elevated, 'moved');
    expect(forClient!.payload).toEqual({ fromProjectId: null, fromHumanId: null, toProjectId: clientProject.id, toHumanId: moved.humanId });
    const page = JSON.stringify(await ok('GET', `/tickets/${t.id}`, tokens.elevated));
    expect(page).not.toContain(internal.id);
    expect(page).not.toContain(t.humanId);

    const narrow = (await makeToken(sql, ws, member, { projectIds: [clientProject.id] })).token;
    expect((await events(t.id, narrow, 'moved'))[0]!.payload).toMatchObject({ fromProjectId: null, fromHumanId: null, toProjectId: clientProject.id });
    expect((await events(t.id, tokens.member, 'moved'))[0]!.payload).toEqual({
      fromProjectId: internal.id,
      fromHumanId: t.humanId,
      toProjectId: clientProject.id,
      toHumanId: moved.humanId,
    });
  });

  it('a deleted ticket’s link_removed and parent_changed stay on the other tickets for those who could see it, and nobody else', async () => {
    const sql = app.db.sql;
    const doomed = await makeTicket(sql, ws, { projectId: internal.id });
    const hiddenDoomed = await makeTicket(sql, ws, { projectId: secret.id });
    const survivor = await makeTicket(sql, ws, { projectId: internal.id });
    await makeLink(sql, ws, { sourceId: survivor.id, targetId: doomed.id, kind: 'relates' });
    await makeLink(sql, ws, { sourceId: survivor.id, targetId: hiddenDoomed.id, kind: 'relates' });
    const from = (await ok('GET', '/changes?after=0&limit=500', tokens.member)).nextAfter;

    const session = await login(app, admin.email, admin.password);
    expect((await app.call('POST', '/api/auth/reauth', { session, body: { password: admin.password } })).status).toBe(200);
    for (const t of [doomed, hiddenDoomed]) expect((await app.call('DELETE', api(`/tickets/${t.id}`), { session })).status).toBe(200);

    expect((await events(survivor.id, tokens.member, 'link_removed')).map((e) => e.payload.otherId)).toEqual([doomed.id]);
    expect((await events(survivor.id, tokens.admin, 'link_removed')).map((e) => e.payload.otherId).sort()).toEqual([doomed.id, hiddenDoomed.id].sort());
    const changes = (await ok('GET', `/changes?after=${from}&limit=500`, tokens.member)).changes as { ticketId: string; kind: string }[];
    expect(changes.filter((c) => c.ticketId === survivor.id).map((c) => c.kind)).toEqual(['link_removed']);
  });
});
