import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeClient, makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { mcpSession, type McpSession } from './helpers/mcp.ts';

/**
 * Finding things by name without guessing (issue 14): list_projects, list_people, get_workflow's
 * names passed straight back, project keys and names for every token, moveState by name.
 */

let app: TestApp;
let ws: Workspace;
let web: { id: string; key: string };
let ops: { id: string; key: string };
const people = {} as Record<'owner' | 'member' | 'outsider' | 'acmeBoss' | 'acmeUser' | 'globexUser', Person>;
const sessions: McpSession[] = [];

async function session(person: Person, opts: Parameters<typeof makeToken>[3] = {}): Promise<McpSession> {
  const s = await mcpSession(app, (await makeToken(app.db.sql, ws, person, opts)).token);
  sessions.push(s);
  return s;
}

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  const acme = await makeClient(sql, ws, { name: 'Acme' });
  const globex = await makeClient(sql, ws, { name: 'Globex' });
  people.owner = await makeUser(sql, ws, { role: 'owner', name: 'Olga Owner' });
  people.member = await makeUser(sql, ws, { name: 'Mia Member' });
  people.outsider = await makeUser(sql, ws, { name: 'Otto Outsider' });
  people.acmeBoss = await makeUser(sql, ws, { role: 'client_elevated', clientId: acme.id, name: 'Ada Acme' });
  people.acmeUser = await makeUser(sql, ws, { role: 'client', clientId: acme.id, name: 'Abe Acme' });
  people.globexUser = await makeUser(sql, ws, { role: 'client', clientId: globex.id, name: 'Gus Globex' });
  web = await makeProject(sql, ws, { key: 'WEB', billingClientId: acme.id, members: [{ person: people.member, isManager: true }] });
  ops = await makeProject(sql, ws, { key: 'OPS', billingClientId: globex.id });
  await sql`update projects set name = 'Web shop' where id = ${web.id}`;
  await makeTicket(sql, ws, { projectId: web.id, title: 'Checkout fails' });
  await makeTicket(sql, ws, { projectId: ops.id, title: 'Backups' });
});
afterAll(async () => {
  for (const s of sessions) await s.close();
  await app.close();
});

describe('list_projects', () => {
  it('names every project to the owner, a member only theirs, with billing client and membership', async () => {
    const owner = await session(people.owner);
    expect((await owner.ok('list_projects')).projects).toEqual([
      { id: ops.id, key: 'OPS', name: 'Project OPS', billingClient: 'Globex', membership: null },
      { id: web.id, key: 'WEB', name: 'Web shop', billingClient: 'Acme', membership: null },
    ]);
    const member = await session(people.member);
    const mine = (await member.ok('list_projects')).projects;
    // a project the member does not belong to is not named to them (the authorization matrix's rule)
    expect(mine.map((p: any) => [p.key, p.membership])).toEqual([['WEB', 'full manager']]);
    const text = ((await member.call('list_projects')).content as any)[0].text;
    expect(text).toBe('WEB Web shop (client Acme) [you: full manager]');
    expect((await (await session(people.outsider)).ok('list_projects')).projects).toEqual([]);
  });

  it('a project-restricted token and a client user see only their projects', async () => {
    const restricted = await session(people.owner, { projectIds: [web.id] });
    expect((await restricted.ok('list_projects')).projects.map((p: any) => p.key)).toEqual(['WEB']);
    const client = await session(people.acmeBoss, { scopes: ['read'] });
    expect((await client.ok('list_projects')).projects.map((p: any) => p.key)).toEqual(['WEB']);
  });
});

describe('list_people', () => {
  const names = async (s: McpSession, args: Record<string, unknown> = {}) => (await s.ok('list_people', args)).people.map((p: any) => p.name);

  it('the owner sees every workspace user and every client person, with email, role and client', async () => {
    const owner = await session(people.owner);
    expect(await names(owner)).toEqual(['Abe Acme', 'Ada Acme', 'Gus Globex', 'Mia Member', 'Olga Owner', 'Otto Outsider']);
    const out = await owner.ok('list_people', { query: 'globex' });
    expect(out).toEqual({
      people: [{ id: people.globexUser.id, name: 'Gus Globex', email: people.globexUser.email, role: 'client', client: 'Globex' }],
      omitted: 0,
    });
    const limited = await owner.ok('list_people', { limit: 2 });
    expect(limited.people).toHaveLength(2);
    expect(limited.omitted).toBe(4);
  });

  it('a member sees colleagues and the client people of their projects only; a member of nothing, colleagues only', async () => {
    expect(await names(await session(people.member))).toEqual(['Abe Acme', 'Ada Acme', 'Mia Member', 'Olga Owner', 'Otto Outsider']);
    expect(await names(await session(people.outsider))).toEqual(['Mia Member', 'Olga Owner', 'Otto Outsider']);
  });

  it('a project-restricted token: the client people of its projects; client users never see the agency', async () => {
    expect(await names(await session(people.owner, { projectIds: [ops.id] }))).toEqual(['Gus Globex', 'Mia Member', 'Olga Owner', 'Otto Outsider']);
    expect(await names(await session(people.acmeBoss, { scopes: ['read'] }))).toEqual(['Abe Acme', 'Ada Acme']);
    expect(await names(await session(people.acmeUser, { scopes: ['read'] }))).toEqual(['Abe Acme']);
  });

  it('an email from the list is accepted as the assignee', async () => {
    const member = await session(people.member);
    const [mia] = (await member.ok('list_people', { query: 'mia' })).people;
    const created = await member.ok('create_ticket', { project: 'WEB', title: 'Assigned by email', assignee: mia.email });
    expect(created.assignee).toBe('Mia Member');
  });
});

describe('get_workflow for every kind of caller', () => {
  it('a project-restricted token, a member of nothing and a client user get the same names to pass back', async () => {
    const names = (wf: any) => ({
      states: wf.states.map((x: any) => x.name),
      kinds: wf.kinds.map((x: any) => x.name),
      priorities: wf.priorities.map((x: any) => x.name),
    });
    const owner = names(await (await session(people.owner)).ok('get_workflow'));
    expect(owner.states).toContain('In review');
    for (const s of [await session(people.member, { projectIds: [web.id] }), await session(people.outsider), await session(people.acmeUser)]) {
      expect(names(await s.ok('get_workflow'))).toEqual(owner);
    }
  });

  it('a project-restricted token cannot read a ticket of another project through the template: not found', async () => {
    const restricted = await session(people.owner, { projectIds: [web.id] });
    const other = await restricted.client.readResource({ uri: 'worktracker://tickets/OPS-1' }).then(
      () => 'read',
      (err: { code?: number }) => err.code,
    );
    expect(other).toBe(-32002);
    const own = await restricted.client.readResource({ uri: 'worktracker://tickets/WEB-1' });
    expect(JSON.parse((own.contents[0] as { text: string }).text)).toMatchObject({ humanId: 'WEB-1' });
  });
});

describe('names passed straight back', () => {
  it('get_workflow names are accepted by update_ticket and search_tickets', async () => {
    const owner = await session(people.owner);
    const wf = await owner.ok('get_workflow');
    const review = wf.states.find((s: any) => s.key === 'in_review');
    const high = wf.priorities.find((p: any) => p.key === 'high');
    const [ticket] = (await owner.ok('search_tickets', { project: 'Web shop', query: 'Checkout' })).items;
    const updated = await owner.ok('update_ticket', { ticket: ticket.humanId, state: review.name, priority: high.name });
    expect(updated).toMatchObject({ state: 'In review', priority: high.name });
    expect((await owner.ok('search_tickets', { states: [review.name] })).items.map((t: any) => t.humanId)).toEqual([ticket.humanId]);
  });

  it('get_ticket names the states the caller may move the ticket to', async () => {
    const member = await session(people.member);
    const t = await member.call('get_ticket', { ticket: 'WEB-1' });
    const moves = t.structuredContent.permissions.moveState;
    const wf = await member.ok('get_workflow');
    expect(moves.map((m: any) => m.name)).toEqual(wf.states.map((s: any) => s.name));
    expect(moves.map((m: any) => m.name)).toContain('In review');
    expect(moves.every((m: any) => /^[0-9a-f-]{36}$/.test(m.id))).toBe(true);
    expect(t.structuredContent.permissions.customerResolveState).toEqual({ id: expect.any(String), name: 'Done' });
    const text = (t.content as any)[0].text as string;
    expect(text).toContain(`You can move it to: ${wf.states.map((s: any) => s.name).join(', ')}`);
    // a client user may only resolve or reopen
    const client = await session(people.acmeBoss);
    const seen = await client.ok('get_ticket', { ticket: 'WEB-1' });
    expect(seen.permissions.moveState.map((m: any) => m.name).sort()).toEqual(['Done', 'Todo']);
  });
});

describe('a project-restricted token names its project by key', () => {
  it('search_tickets and create_ticket take the key (and the name); the schema is no enum of ids', async () => {
    const restricted = await session(people.member, { projectIds: [web.id] });
    const schema = restricted.tools.find((t) => t.name === 'create_ticket')!.inputSchema.properties!.project as any;
    expect(schema.type).toBe('string');
    expect(schema.enum).toBeUndefined();
    expect((await restricted.ok('search_tickets', { project: 'WEB' })).items.map((t: any) => t.title)).toContain('Checkout fails');
    expect((await restricted.ok('search_tickets', { project: 'web' })).items.length).toBeGreaterThan(0);
    const created = await restricted.ok('create_ticket', { project: 'WEB', title: 'Made with the key' });
    expect(created.humanId).toMatch(/^WEB-\d+$/);
    expect((await restricted.ok('create_ticket', { project: 'Web shop', title: 'Made with the name' })).humanId).toMatch(/^WEB-/);
    // the only project is the default
    expect((await restricted.ok('create_ticket', { title: 'Made by default' })).humanId).toMatch(/^WEB-/);
    // another project stays refused by the core, by key as by id
    expect((await restricted.call('create_ticket', { project: 'OPS', title: 'Elsewhere' })).isError).toBe(true);
    expect((await restricted.call('search_tickets', { project: 'OPS' })).structuredContent.items ?? []).toEqual([]);
  });

  it('a name matching no project it may address lists only its own projects as choices', async () => {
    const restricted = await session(people.owner, { projectIds: [web.id] });
    const err = await restricted.fail('search_tickets', { project: 'Project OPS' });
    expect(err).toMatchObject({ code: 'invalid', reason: 'unknown_project', details: { field: 'project', value: 'Project OPS' } });
    expect(err.details.choices.map((c: any) => c.key)).toEqual(['WEB']);
  });
});
