import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requirementsOf } from '../src/core/access/authorize.ts';
import { allTools } from '../src/mcp/registry.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeClient, makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { mcpClient, mcpSession } from './helpers/mcp.ts';

let app: TestApp;
let ws: Workspace;
let member: Person;
let web: { id: string; key: string };
let api: { id: string; key: string };

beforeAll(async () => {
  app = await startTestApp();
  ws = await makeWorkspace(app.db.sql);
  member = await makeUser(app.db.sql, ws);
  web = await makeProject(app.db.sql, ws, { members: [{ person: member }] });
  api = await makeProject(app.db.sql, ws, { members: [{ person: member }] });
});
afterAll(() => app.close());

async function listTools(token: string, query = ''): Promise<Tool[]> {
  const c = await mcpClient(app, token, query);
  const { tools } = await c.listTools();
  await c.close();
  return tools;
}
const names = (tools: Tool[]) => tools.map((t) => t.name).sort();
const byName = (tools: Tool[], name: string) => tools.find((t) => t.name === name)!;
const props = (tool: Tool) => tool.inputSchema.properties as Record<string, any>;
const writeTools = allTools.filter((t) => t.writes).map((t) => t.name);
/** Every tool a workspace user who is no Owner or Admin can have: all but the administration's (list_rates). */
const userTools = allTools.filter((t) => !requirementsOf(t.action).admin).map((t) => t.name);
const timeTools = allTools.filter((t) => t.toolset === 'time').map((t) => t.name);

describe('the token decides the tool surface', () => {
  it('full scopes: every tool; Inbox arguments exist', async () => {
    const tools = await listTools((await makeToken(app.db.sql, ws, member)).token);
    expect(names(tools)).toEqual(userTools.sort());
    expect(userTools.length).toBe(allTools.length - 1);
    expect(props(byName(tools, 'search_tickets')).queue).toBeDefined();
    const project = props(byName(tools, 'create_ticket')).project;
    expect(project.type).toEqual(['string', 'null']);
    expect(byName(tools, 'create_ticket').inputSchema.required).toContain('project');
  });

  it('read only: no tool that changes data', async () => {
    const tools = await listTools((await makeToken(app.db.sql, ws, member, { scopes: ['read', 'triage'] })).token);
    expect(tools.length).toBeGreaterThan(0);
    for (const name of writeTools) expect(names(tools)).not.toContain(name);
    for (const t of tools) expect(t.annotations?.readOnlyHint, t.name).toBe(true);
  });

  it('no triage: no Inbox arguments (search_tickets has no queue, create_ticket needs a project)', async () => {
    const tools = await listTools((await makeToken(app.db.sql, ws, member, { scopes: ['read', 'write'] })).token);
    expect(props(byName(tools, 'search_tickets')).queue).toBeUndefined();
    expect(props(byName(tools, 'get_board')).queue).toBeUndefined();
    expect(props(byName(tools, 'create_ticket')).project.type).toBe('string');
  });

  it('a one-project allow-list: project arguments take a key, name or id and default to that project', async () => {
    const t = (await makeToken(app.db.sql, ws, member, { projectIds: [web.id] })).token;
    const tools = await listTools(t);
    for (const [tool, arg] of [
      ['create_ticket', 'project'],
      ['move_ticket', 'project'],
      ['search_tickets', 'project'],
      ['get_context_pack', 'project'],
    ] as const) {
      // no enum of ids: the key the results show is accepted (issue 14)
      expect(props(byName(tools, tool))[arg], `${tool}.${arg}`).toMatchObject({ type: 'string', default: web.id });
      expect(props(byName(tools, tool))[arg].enum, `${tool}.${arg}`).toBeUndefined();
      expect(byName(tools, tool).inputSchema.required ?? []).not.toContain(arg);
    }
    expect(props(byName(tools, 'search_tickets')).queue).toBeUndefined();

    // the default applies: a ticket created without a project lands in the allowed one
    const s = await mcpSession(app, t);
    const created = await s.ok('create_ticket', { title: 'Defaults to the only project' });
    expect(created.humanId).toMatch(new RegExp(`^${web.key}-`));
    expect((await s.ok('create_ticket', { project: web.key, title: 'By key' })).humanId).toMatch(new RegExp(`^${web.key}-`));
    // another project is refused by the core, by id as by key, and nothing is created there
    const e = await s.fail('create_ticket', { project: api.id, title: 'Elsewhere' });
    expect(await s.fail('create_ticket', { project: api.key, title: 'Elsewhere' })).toEqual(e);
    expect(e.code).not.toBe('internal');
    expect(await app.db.sql`select 1 from tickets where project_id = ${api.id} and title = 'Elsewhere'`).toHaveLength(0);
    await s.close();
  });

  it('a two-project allow-list: project is required, with no default', async () => {
    const tools = await listTools((await makeToken(app.db.sql, ws, member, { projectIds: [web.id, api.id] })).token);
    const project = props(byName(tools, 'create_ticket')).project;
    expect(project.type).toBe('string');
    expect(project.enum).toBeUndefined();
    expect(project.default).toBeUndefined();
    expect(byName(tools, 'create_ticket').inputSchema.required).toContain('project');
  });

  it('an agent token gets the workspace-user surface, acting as the agent', async () => {
    const owner = await makeUser(app.db.sql, ws, { role: 'owner' });
    const agent = await makeUser(app.db.sql, ws, { role: 'agent' });
    const t = (await makeToken(app.db.sql, ws, agent, { kind: 'agent', createdBy: owner.id })).token;
    const tools = await listTools(t);
    expect(names(tools)).toEqual(userTools.sort());
    await makeTicket(app.db.sql, ws, { projectId: null, title: 'For the agent', assigneeId: agent.id });
    const s = await mcpSession(app, t);
    const my = await s.ok('get_my_work', {});
    expect(my.assigned.map((x: any) => x.title)).toContain('For the agent');
    await s.close();
  });

  it('a client user: no time tools, no Inbox arguments', async () => {
    const client = await makeClient(app.db.sql, ws);
    const person = await makeUser(app.db.sql, ws, { role: 'client', clientId: client.id });
    const tools = await listTools((await makeToken(app.db.sql, ws, person)).token);
    for (const name of timeTools) expect(names(tools)).not.toContain(name);
    expect(names(tools)).toContain('search_tickets');
    expect(names(tools)).toContain('get_bank_balances');
    expect(props(byName(tools, 'search_tickets')).queue).toBeUndefined();
    expect(props(byName(tools, 'create_ticket')).project.type).toBe('string');
  });

  it('connections narrow further: read-only and toolsets', async () => {
    const t = (await makeToken(app.db.sql, ws, member)).token;
    const ro = await listTools(t, '?readonly=1');
    for (const name of writeTools) expect(names(ro)).not.toContain(name);
    expect(names(await listTools(t, '?toolsets=time,context'))).toEqual(
      allTools
        .filter((x) => x.toolset === 'time' || x.toolset === 'context')
        .map((x) => x.name)
        .sort(),
    );
  });
});
