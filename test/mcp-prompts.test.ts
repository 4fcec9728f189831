import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeCategory, makeClient, makeProject, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { mcpClient, mcpSession } from './helpers/mcp.ts';

/**
 * Issue 26 and 23 through the SDK's own client: prompts (prompts/list, prompts/get) for the work
 * assistants are asked most, completion/complete for their arguments as the caller may see them,
 * and list_rates for Owners and Admins with an admin-scoped token.
 */
let app: TestApp;
let ws: Workspace;
let owner: Person;
let member: Person;
let web: { id: string; key: string };
let ownerToken: string;
let memberToken: string;
let carla: Person;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  owner = await makeUser(sql, ws, { role: 'owner', name: 'Olga Owner' });
  member = await makeUser(sql, ws, { role: 'member', name: 'Mia Member' });
  // a client whose people the member cannot see: it is on WEBSHOP, not one of the member's projects
  const acme = await makeClient(sql, ws, { code: 'ACME', name: 'Acme Corp' });
  web = await makeProject(sql, ws, { key: 'WEB', members: [{ person: member }] });
  await makeProject(sql, ws, { key: 'WEBSHOP', billingClientId: acme.id });
  await makeProject(sql, ws, { key: 'API' });
  await makeClient(sql, ws, { code: 'ACORN', name: 'Acorn Ltd' });
  carla = await makeUser(sql, ws, { role: 'client', clientId: acme.id, name: 'Carla Client' });
  ownerToken = (await makeToken(sql, ws, owner, { scopes: ['read', 'write', 'triage', 'admin'] })).token;
  memberToken = (await makeToken(sql, ws, member)).token;
});
afterAll(() => app.close());

const complete = async (token: string, prompt: string, argument: string, value: string) => {
  const c = await mcpClient(app, token);
  try {
    return (await c.complete({ ref: { type: 'ref/prompt', name: prompt }, argument: { name: argument, value } })).completion;
  } finally {
    await c.close();
  }
};
const protocolError = async (run: () => Promise<unknown>): Promise<McpError> => {
  const err = await run().then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(McpError);
  return err as McpError;
};

describe('prompts', () => {
  it('prompts/list: the server declares prompts and completions; each prompt has a title, a description and described arguments', async () => {
    const c = await mcpClient(app, ownerToken);
    expect(c.getServerCapabilities()).toMatchObject({ prompts: {}, completions: {} });
    expect(c.getInstructions()).toContain('log_week_time, triage_inbox, summarise_client_month');
    const { prompts } = await c.listPrompts();
    await c.close();
    expect(prompts.map((p) => p.name)).toEqual(['log_week_time', 'triage_inbox', 'summarise_client_month']);
    for (const p of prompts) {
      expect(p.title, p.name).toBeTruthy();
      expect(p.description!.length, p.name).toBeGreaterThan(30);
      for (const a of p.arguments ?? []) expect(a.description, `${p.name}.${a.name}`).toBeTruthy();
    }
    expect(prompts[0]!.arguments).toContainEqual(expect.objectContaining({ name: 'description', required: true }));
  });

  it('follows what the token can do: read-only connections have no prompt that writes; no triage scope, no Inbox; a client user none', async () => {
    const names = async (token: string, query = '') => {
      const c = await mcpClient(app, token, query);
      const { prompts } = await c.listPrompts();
      await c.close();
      return prompts.map((p) => p.name);
    };
    expect(await names(ownerToken, '?readonly=1')).toEqual(['summarise_client_month']);
    // a member sees no clients (clients.list is theirs too, time.list as well): all three
    expect(await names(memberToken)).toEqual(['log_week_time', 'triage_inbox', 'summarise_client_month']);
    const noTriage = (await makeToken(app.db.sql, ws, member, { scopes: ['read', 'write'] })).token;
    expect(await names(noTriage)).toEqual(['log_week_time', 'summarise_client_month']);
    const client = await makeClient(app.db.sql, ws);
    const clientUser = await makeUser(app.db.sql, ws, { role: 'client', clientId: client.id });
    expect(await names((await makeToken(app.db.sql, ws, clientUser)).token)).toEqual([]);
    // and a prompt the connection does not have is unknown to it
    const c = await mcpClient(app, noTriage);
    expect((await protocolError(() => c.getPrompt({ name: 'triage_inbox' }))).code).toBe(-32602);
    await c.close();
  });

  it('prompts/get fills the arguments in: this week’s dates, the description, the tools to use', async () => {
    const c = await mcpClient(app, memberToken);
    const got = await c.getPrompt({ name: 'log_week_time', arguments: { description: 'Mon 2h checkout bug, Tue 3h WEB-12 review', project: 'WEB' } });
    expect(got.messages).toHaveLength(1);
    expect(got.messages[0]!.role).toBe('user');
    const text = (got.messages[0]!.content as { type: 'text'; text: string }).text;
    expect(text).toContain('Mon 2h checkout bug, Tue 3h WEB-12 review');
    const monday = /Monday (\d{4}-\d{2}-\d{2}) to Sunday (\d{4}-\d{2}-\d{2})/.exec(text)!;
    expect(new Date(`${monday[1]}T00:00:00Z`).getUTCDay()).toBe(1);
    expect((Date.parse(monday[2]!) - Date.parse(monday[1]!)) / 86_400_000).toBe(6);
    for (const tool of ['get_time_entries', 'search_tickets', 'log_time']) expect(text).toContain(tool);
    expect(text).toContain('in project WEB');
    const month = await c.getPrompt({ name: 'summarise_client_month', arguments: { client: 'ACME', month: '2026-02' } });
    expect((month.messages[0]!.content as { text: string }).text).toContain('Summarise the month 2026-02 (2026-02-01 to 2026-02-28) for client ACME.');
    await c.close();
  });

  it('prompts/get refuses a missing required argument, a malformed month and an unknown prompt with -32602', async () => {
    const c = await mcpClient(app, memberToken);
    for (const [name, args] of [
      ['log_week_time', {}],
      ['log_week_time', { description: '   ' }],
      ['summarise_client_month', { client: 'ACME', month: '2026-13' }],
      ['no_such_prompt', {}],
    ] as const) {
      const err = await protocolError(() => c.getPrompt({ name, arguments: args }));
      expect(err.code, `${name} ${JSON.stringify(args)}`).toBe(-32602);
    }
    await c.close();
  });
});

describe('completion/complete', () => {
  it('project keys: the projects the caller may name, by prefix', async () => {
    expect((await complete(ownerToken, 'log_week_time', 'project', 'we')).values).toEqual(['WEB', 'WEBSHOP']);
    // the member belongs to WEB only
    expect((await complete(memberToken, 'log_week_time', 'project', 'WE')).values).toEqual(['WEB']);
    expect((await complete(memberToken, 'triage_inbox', 'project', '')).values).toEqual(['WEB']);
    // an allow-listed token: its projects only
    const narrow = (await makeToken(app.db.sql, ws, owner, { projectIds: [web.id] })).token;
    expect((await complete(narrow, 'log_week_time', 'project', '')).values).toEqual(['WEB']);
  });

  it('people: only those the caller may see (SQL through the core read), by name or email', async () => {
    const asOwner = await complete(ownerToken, 'triage_inbox', 'assignee', 'carla');
    expect(asOwner.values).toEqual([carla.email]);
    expect((await complete(memberToken, 'triage_inbox', 'assignee', 'carla')).values).toEqual([]);
    expect((await complete(memberToken, 'triage_inbox', 'assignee', 'mia')).values).toEqual([member.email]);
  });

  it('states, clients and months', async () => {
    expect((await complete(memberToken, 'triage_inbox', 'state', 'in ')).values).toEqual(expect.arrayContaining(['In progress']));
    for (const s of (await complete(memberToken, 'triage_inbox', 'state', 'in ')).values) expect(s.toLowerCase()).toMatch(/^in /);
    expect((await complete(ownerToken, 'summarise_client_month', 'client', 'ac')).values).toEqual(['ACME', 'ACORN']);
    const months = (await complete(ownerToken, 'summarise_client_month', 'month', '')).values;
    expect(months).toHaveLength(13);
    for (const m of months) expect(m).toMatch(/^\d{4}-\d{2}$/);
    expect((await complete(ownerToken, 'log_week_time', 'description', 'x')).values).toEqual([]);
  });

  it('refuses an argument the prompt does not have, and a prompt the connection does not have, with -32602', async () => {
    const c = await mcpClient(app, ownerToken);
    const err = await protocolError(() => c.complete({ ref: { type: 'ref/prompt', name: 'log_week_time' }, argument: { name: 'nope', value: '' } }));
    expect(err.code).toBe(-32602);
    await c.close();
    const ro = await mcpClient(app, ownerToken, '?readonly=1');
    const err2 = await protocolError(() => ro.complete({ ref: { type: 'ref/prompt', name: 'log_week_time' }, argument: { name: 'project', value: '' } }));
    expect(err2.code).toBe(-32602);
    await ro.close();
  });
});

describe('list_rates', () => {
  it('lists the rate table with names, for an Owner’s admin-scoped token; no such tool without the admin scope or for a member', async () => {
    const dev = await makeCategory(app.db.sql, ws, 'Developer');
    const put = await app.call('PUT', `/api/w/${ws.slug}/rates`, {
      token: ownerToken,
      body: {
        rates: [
          { categoryId: dev.id, currency: 'EUR', hourlyRateMinor: 9550, effectiveFrom: '2026-01-01' },
          { categoryId: dev.id, projectId: web.id, currency: 'EUR', hourlyRateMinor: 12000, effectiveFrom: '2026-01-01' },
        ],
      },
    });
    expect(put.status).toBe(200);
    const s = await mcpSession(app, ownerToken);
    const out = await s.ok('list_rates', {});
    expect(out.rates).toEqual([
      { category: 'Developer', client: null, project: null, currency: 'EUR', hourlyRateMinor: 9550, effectiveFrom: '2026-01-01' },
      { category: 'Developer', client: null, project: 'WEB', currency: 'EUR', hourlyRateMinor: 12000, effectiveFrom: '2026-01-01' },
    ]);
    const text = ((await s.call('list_rates', {})).content[0] as { text: string }).text;
    expect(text).toBe('Developer, default: EUR 95.50/h from 2026-01-01\nDeveloper, project WEB: EUR 120.00/h from 2026-01-01');
    await s.close();
    const listed = async (token: string) => {
      const c = await mcpClient(app, token);
      const { tools } = await c.listTools();
      await c.close();
      return tools.map((t) => t.name);
    };
    expect(await listed(ownerToken)).toContain('list_rates');
    expect(await listed((await makeToken(app.db.sql, ws, owner)).token)).not.toContain('list_rates');
    expect(await listed(memberToken)).not.toContain('list_rates');
    const plain = await mcpSession(app, (await makeToken(app.db.sql, ws, owner)).token);
    const refused = await plain.client.callTool({ name: 'list_rates', arguments: {} });
    expect(refused.isError).toBe(true);
    expect((refused.structuredContent as any).reason).toBe('tool_not_available');
    await plain.close();
  });
});
