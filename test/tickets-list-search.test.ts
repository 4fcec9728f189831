import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeClient, makeComment, makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

let app: TestApp;
let ws: Workspace;
let owner: Person;
let clientUser: Person;
let ownerToken: string;
let clientToken: string;
let project: { id: string; key: string };
const T: Record<string, { id: string; humanId: string; number: number }> = {};

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  owner = await makeUser(sql, ws, { role: 'owner' });
  const client = await makeClient(sql, ws);
  clientUser = await makeUser(sql, ws, { role: 'client', clientId: client.id });
  project = await makeProject(sql, ws, { key: 'WEB', billingClientId: client.id });
  ownerToken = (await makeToken(sql, ws, owner)).token;
  clientToken = (await makeToken(sql, ws, clientUser, { scopes: ['read'] })).token;

  // all reported by the client user, so visibility is not what differs below
  const mk = (title: string, description = '') => makeTicket(sql, ws, { projectId: project.id, title, description, reporterId: clientUser.id });
  T.title = await mk('Invoice rounding glitch');
  T.description = await mk('Something else', 'The **invoice** total shows a rounding error on mobile');
  T.clientComment = await mk('Third ticket');
  await makeComment(sql, ws, { ticketId: T.clientComment!.id, body: 'Customer says the zeppelin page is slow', audience: 'client' });
  T.internalComment = await mk('Fourth ticket');
  await makeComment(sql, ws, { ticketId: T.internalComment!.id, body: 'Margin on this is thin, quasar discount applied', audience: 'internal' });
  T.split = await mk('Walrus handling', '');
  await makeComment(sql, ws, { ticketId: T.split!.id, body: 'tusk notes', audience: 'internal' });
  for (let i = 0; i < 8; i++) await mk(`Filler ${i}`);
});
afterAll(() => app.close());

async function search(q: string, token = ownerToken, extra = ''): Promise<string[]> {
  const res = await app.call('GET', `/api/w/${ws.slug}/tickets?q=${encodeURIComponent(q)}${extra}`, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.items.map((t: { id: string }) => t.id);
}

const sorted = (xs: string[]) => [...xs].sort();

describe('GET /tickets?q=', () => {
  it('matches words of the title and the description', async () => {
    expect(sorted(await search('invoice'))).toEqual(sorted([T.title!.id, T.description!.id]));
    expect(await search('glitch')).toEqual([T.title!.id]);
    expect(await search('INVOICE mobile')).toEqual([T.description!.id]);
  });

  it('matches client-audience comments for everyone who sees the ticket', async () => {
    expect(await search('zeppelin')).toEqual([T.clientComment!.id]);
    expect(await search('zeppelin', clientToken)).toEqual([T.clientComment!.id]);
  });

  it('matches internal comments for workspace users only', async () => {
    expect(await search('quasar')).toEqual([T.internalComment!.id]);
    expect(await search('quasar', clientToken)).toEqual([]);
    // words spread over the title and an internal comment match together for staff
    expect(await search('walrus tusk')).toEqual([T.split!.id]);
    expect(await search('walrus tusk', clientToken)).toEqual([]);
    expect(await search('walrus', clientToken)).toEqual([T.split!.id]);
  });

  it('understands web-search syntax: quoted phrases, OR, and -exclusion', async () => {
    expect(await search('"rounding glitch"')).toEqual([T.title!.id]);
    expect(await search('"glitch rounding"')).toEqual([]);
    expect(sorted(await search('glitch or zeppelin'))).toEqual(sorted([T.title!.id, T.clientComment!.id]));
    expect(await search('invoice -glitch')).toEqual([T.description!.id]);
  });

  it('matches a human id exactly, including an old number, in any case', async () => {
    expect(await search(T.title!.humanId)).toEqual([T.title!.id]);
    expect(await search(` ${T.title!.humanId.toLowerCase()} `)).toEqual([T.title!.id]);
    await app.db.sql`insert into ticket_refs (workspace_id, project_id, number, ticket_id) values (${ws.id}, ${project.id}, 777, ${T.description!.id})`;
    expect(await search('WEB-777')).toEqual([T.description!.id]);
    expect(await search('WEB-9999')).toEqual([]);
  });

  it('follows edits: title changes and comment edits and deletes update the index', async () => {
    const sql = app.db.sql;
    const t = await makeTicket(sql, ws, { projectId: project.id, title: 'Original heading' });
    expect(await search('heading')).toEqual([t.id]);
    await sql`update tickets set title = 'Renamed caption' where id = ${t.id}`;
    expect(await search('heading')).toEqual([]);
    expect(await search('caption')).toEqual([t.id]);
    const c = await makeComment(sql, ws, { ticketId: t.id, body: 'mention of a platypus', audience: 'client' });
    expect(await search('platypus')).toEqual([t.id]);
    await sql`update comments set body = 'now about an axolotl' where id = ${c.id}`;
    expect(await search('platypus')).toEqual([]);
    expect(await search('axolotl')).toEqual([t.id]);
    await sql`update comments set audience = 'internal' where id = ${c.id}`;
    expect(await search('axolotl')).toEqual([t.id]);
    expect(await search('axolotl', clientToken)).toEqual([]);
    await sql`delete from comments where id = ${c.id}`;
    expect(await search('axolotl')).toEqual([]);
  });

  it('combines with filters and pages like any list', async () => {
    expect(await search('ticket', ownerToken, '&limit=1')).toHaveLength(1);
    const res = await app.call('GET', `/api/w/${ws.slug}/tickets?q=ticket&limit=1`, { token: ownerToken });
    const next = await app.call('GET', `/api/w/${ws.slug}/tickets?q=ticket&limit=1&cursor=${res.body.nextCursor}`, { token: ownerToken });
    expect(next.body.items).toHaveLength(1);
    expect(next.body.items[0].id).not.toBe(res.body.items[0].id);
    expect(await search('invoice', ownerToken, '&stateCategory=closed')).toEqual([]);
  });

  it('a search result carries the same TicketSummary as the plain list (the two are built differently)', async () => {
    const sql = app.db.sql;
    const assignee = await makeUser(sql, ws, { role: 'client_elevated', clientId: (await makeClient(sql, ws, { name: 'Shape Co' })).id });
    const t = await makeTicket(sql, ws, {
      projectId: project.id,
      title: 'Shape check',
      assigneeId: assignee.id,
      reporterId: clientUser.id,
      dueDate: '2031-01-02',
    });
    await makeComment(sql, ws, { ticketId: t.id, body: 'one', audience: 'client' });
    const plain = await app.call('GET', `/api/w/${ws.slug}/tickets?limit=50`, { token: ownerToken });
    const searched = await app.call('GET', `/api/w/${ws.slug}/tickets?q=shape`, { token: ownerToken });
    const fromPlain = plain.body.items.find((x: { id: string }) => x.id === t.id);
    expect(fromPlain.assignee).toMatchObject({ id: assignee.id, clientName: 'Shape Co' });
    expect(searched.body.items).toEqual([fromPlain]);
  });

  it('a query without words (punctuation only, or blank) is no error', async () => {
    expect(await search('!!! ???')).toEqual([]);
    expect((await search('   ')).length).toBeGreaterThan(5);
  });
});
