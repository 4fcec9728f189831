import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makePeriod, makeProject, makeTicket, makeTimeEntry, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { mcpSession } from './helpers/mcp.ts';

// Issue 9, defect 1: GET /time must not name a ticket the caller can no longer see.

let app: TestApp;
let ws: Workspace;
let member: Person;
let admin: Person;
let adminToken: string;
let mine: { id: string; key: string };
let second: { id: string; key: string };
let secret: { id: string; key: string };

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  member = await makeUser(sql, ws, { role: 'member' });
  admin = await makeUser(sql, ws, { role: 'admin' });
  adminToken = (await makeToken(sql, ws, admin)).token;
  mine = await makeProject(sql, ws, { members: [{ person: member }] });
  second = await makeProject(sql, ws, { members: [{ person: member }] });
  secret = await makeProject(sql, ws, { key: 'HUSH' });
  await makePeriod(sql, ws, { start: '2024-05-01', end: '2024-05-31' });
});
afterAll(() => app.close());

const week = (token: string) => app.call('GET', `/api/w/${ws.slug}/time?from=2024-05-01&to=2024-05-31`, { token });

async function entryOn(ticketId: string, spentOn: string, note: string) {
  const e = await makeTimeEntry(app.db.sql, ws, { ticketId, userId: member.id, spentOn, minutes: 45 });
  await app.db.sql`update time_entries set note = ${note} where id = ${e.id}`;
  return e;
}

/** A teammate (admin) moves the ticket and renames it, through the API. */
async function moveAndRename(ticketId: string, projectId: string, title: string) {
  expect((await app.call('POST', `/api/w/${ws.slug}/tickets/${ticketId}/move`, { token: adminToken, body: { projectId } })).status).toBe(200);
  expect((await app.call('PATCH', `/api/w/${ws.slug}/tickets/${ticketId}`, { token: adminToken, body: { title } })).status).toBe(200);
}

describe('GET /time hides tickets out of sight', () => {
  it('keeps the entry and its own facts but names neither the new human id nor the new title of a ticket moved out of sight', async () => {
    const token = (await makeToken(app.db.sql, ws, member)).token;
    const t = await makeTicket(app.db.sql, ws, { projectId: mine.id, title: 'Ordinary work' });
    const e = await entryOn(t.id, '2024-05-10', 'my own note');
    await moveAndRename(t.id, secret.id, 'Acquisition of Initech');

    const res = await week(token);
    expect(res.status).toBe(200);
    const entry = res.body.entries.find((x: { id: string }) => x.id === e.id);
    expect(entry).toMatchObject({
      ticketId: t.id,
      ticketRef: null,
      title: null,
      ticketHidden: true,
      spentOn: '2024-05-10',
      minutes: 45,
      note: 'my own note',
      projectId: mine.id,
    });
    const text = JSON.stringify(res.body);
    expect(text).not.toContain('Initech');
    expect(text).not.toContain('HUSH-');

    // The MCP twin answers the same (its output schema takes the nulls).
    const s = await mcpSession(app, token);
    try {
      const out = await s.ok('get_time_entries', { from: '2024-05-01', to: '2024-05-31' });
      expect(out.entries.find((x: { id: string }) => x.id === e.id)).toMatchObject({ ticketRef: null, title: null, minutes: 45 });
      expect(JSON.stringify(out)).not.toContain('Initech');
    } finally {
      await s.close();
    }

    // The admin, who sees every ticket, still gets the names.
    const all = await app.call('GET', `/api/w/${ws.slug}/time?from=2024-05-01&to=2024-05-31&userId=${member.id}`, { token: adminToken });
    expect(all.body.entries.find((x: { id: string }) => x.id === e.id)).toMatchObject({ title: 'Acquisition of Initech', ticketHidden: false });
  });

  it('hides a ticket that moved past a token’s project allow-list, while the entry stays listed by its attribution', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: mine.id, title: 'Allow-listed work' });
    const e = await entryOn(t.id, '2024-05-11', 'listed by attribution');
    await moveAndRename(t.id, second.id, 'Renamed in the second project');
    const narrow = (await makeToken(app.db.sql, ws, member, { projectIds: [mine.id] })).token;
    const wide = (await makeToken(app.db.sql, ws, member)).token;

    const narrowEntry = (await week(narrow)).body.entries.find((x: { id: string }) => x.id === e.id);
    expect(narrowEntry).toMatchObject({ ticketRef: null, title: null, ticketHidden: true, note: 'listed by attribution', projectId: mine.id });
    expect(JSON.stringify((await week(narrow)).body)).not.toContain('Renamed in the second project');

    // The same person without the allow-list may see the ticket in the second project.
    const wideEntry = (await week(wide)).body.entries.find((x: { id: string }) => x.id === e.id);
    expect(wideEntry).toMatchObject({
      ticketRef: expect.stringMatching(new RegExp(`^${second.key}-\\d+$`)),
      title: 'Renamed in the second project',
      ticketHidden: false,
    });
  });
});
