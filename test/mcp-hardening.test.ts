import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/db/connect.ts';
import { buildMcpServer } from '../src/mcp/server.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeClient, makeProject, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { mcpClient } from './helpers/mcp.ts';

let app: TestApp;
let ws: Workspace;
let member: Person;
let token: string;
let project: { id: string; key: string };

beforeAll(async () => {
  app = await startTestApp();
  ws = await makeWorkspace(app.db.sql);
  member = await makeUser(app.db.sql, ws);
  project = await makeProject(app.db.sql, ws, { members: [{ person: member }] });
  token = (await makeToken(app.db.sql, ws, member)).token;
});
afterAll(() => app.close());

type Result = CallToolResult & { structuredContent: any };

async function call(t: string, name: string, args: Record<string, unknown>, query = '', headers: Record<string, string> = {}): Promise<Result> {
  const c = await mcpClient(app, t, query, headers);
  try {
    return (await c.callTool({ name, arguments: args })) as Result;
  } finally {
    await c.close();
  }
}

async function toolNames(t: string, query = '', headers: Record<string, string> = {}): Promise<string[]> {
  const c = await mcpClient(app, t, query, headers);
  const { tools } = await c.listTools();
  await c.close();
  return tools.map((x) => x.name);
}

/** A raw POST to /mcp, for bodies and params the SDK client never sends. */
async function post(body: string, query = ''): Promise<{ status: number; json: any }> {
  const res = await fetch(`${app.base}/mcp${query}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body,
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

const ticketCount = async () => (await app.db.sql<{ n: number }[]>`select count(*)::int as n from tickets where workspace_id = ${ws.id}`)[0]!.n;

describe('MCP tool arguments: the app-wide input rule', () => {
  it('a NUL byte or a lone surrogate is an isError `invalid_characters` result naming the argument, and writes nothing', async () => {
    const nul = await call(token, 'search_tickets', { query: 'a\u0000b' });
    expect(nul.isError).toBe(true);
    expect(nul.structuredContent).toMatchObject({ code: 'invalid', reason: 'invalid_characters', details: { field: 'query' } });
    const before = await ticketCount();
    const surrogate = await call(token, 'create_ticket', { project: project.key, title: 'x\ud800y' });
    expect(surrogate.structuredContent).toMatchObject({ code: 'invalid', reason: 'invalid_characters', details: { field: 'title' } });
    expect(await ticketCount()).toBe(before);
  });
});

describe('tools/call of a tool the connection does not have', () => {
  it('a write tool with a read-only token: 403 `tool_not_available`, saying the token lacks the write scope', async () => {
    const readOnly = (await makeToken(app.db.sql, ws, member, { scopes: ['read', 'triage'] })).token;
    const r = await call(readOnly, 'create_ticket', { project: project.key, title: 'Nope' });
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toMatchObject({
      code: 'forbidden',
      reason: 'tool_not_available',
      details: { tool: 'create_ticket', cause: 'missing_scope', scope: 'write' },
    });
    expect(r.structuredContent.message).toMatch(/read-only.*write scope/);
  });

  it('a write tool on a read-only connection, a tool outside ?toolsets, a time tool for a client user: each says why', async () => {
    const ro = await call(token, 'create_ticket', { project: project.key, title: 'Nope' }, '?readonly=1');
    expect(ro.structuredContent).toMatchObject({ code: 'forbidden', reason: 'tool_not_available', details: { cause: 'readonly_connection' } });
    expect(ro.structuredContent.message).toMatch(/connection is read-only/);

    const narrowed = await call(token, 'search_tickets', {}, '?toolsets=workflow,board');
    expect(narrowed.structuredContent).toMatchObject({
      reason: 'tool_not_available',
      details: { cause: 'toolset_not_selected', toolset: 'tickets', toolsets: ['workflow', 'board'] },
    });
    expect(narrowed.structuredContent.message).toMatch(/"tickets" toolset/);

    const client = await makeClient(app.db.sql, ws);
    const clientUser = await makeUser(app.db.sql, ws, { role: 'client', clientId: client.id });
    const clientToken = (await makeToken(app.db.sql, ws, clientUser, { scopes: ['read', 'write'] })).token;
    const time = await call(clientToken, 'log_time', { ticket: 'X-1', spentOn: '2030-01-01', minutes: 5 });
    expect(time.structuredContent).toMatchObject({ code: 'forbidden', reason: 'tool_not_available', details: { cause: 'client_user' } });
    expect(time.structuredContent.message).toMatch(/client users/);
  });

  it('a name that is no tool at all stays the protocol error the MCP spec names (-32602 Unknown tool)', async () => {
    const c = await mcpClient(app, token);
    const err = await c.callTool({ name: 'no_such_tool', arguments: {} }).catch((e: unknown) => e);
    await c.close();
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(-32602);
    expect((err as McpError).message).toMatch(/^MCP error -32602: Unknown tool: no_such_tool\./);
  });
});

describe('POST /mcp bodies that are not JSON-RPC answer JSON-RPC errors', () => {
  it('invalid JSON: 400, -32700, id null', async () => {
    for (const body of ['{"jsonrpc": "2.0", "id": 1,', 'nope']) {
      const r = await post(body);
      expect(r.status, body).toBe(400);
      expect(r.json, body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    }
  });

  it('valid JSON that is not a request (42, [], {}, a batch of junk, a message without a method): 400, -32600', async () => {
    for (const body of ['42', '"x"', 'null', '[]', '{}', '[1, 2]', '{"jsonrpc": "2.0", "id": 5}']) {
      const r = await post(body);
      expect(r.status, body).toBe(400);
      expect(r.json, body).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
      expect(r.json.id, body).toBe(body.includes('"id": 5') ? 5 : null);
    }
  });

  it('a body the shared parser refuses for another reason (content type) is a JSON-RPC error too; 401 keeps the envelope', async () => {
    const res = await fetch(`${app.base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain', accept: 'application/json, text/event-stream' },
      body: 'hello',
    });
    expect(res.status).toBe(415);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000, data: { code: 'unsupported_media_type' } } });
    const anonymous = await fetch(`${app.base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(anonymous.status).toBe(401);
    expect((await anonymous.json()).error.code).toBe('unauthenticated');
  });

  it('tools/call without params, or with a name that is not a string: -32602 with a one-line message, no zod dump', async () => {
    for (const params of [undefined, { arguments: {} }, { name: 42 }, { name: 'get_workflow', arguments: 'x' }]) {
      const r = await post(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', ...(params === undefined ? {} : { params }) }));
      expect(r.json, JSON.stringify(params)).toMatchObject({ jsonrpc: '2.0', id: 3, error: { code: -32602 } });
      expect(r.json.error.message).toMatch(/^Invalid params for tools\/call: /);
      expect(r.json.error.message).not.toMatch(/\n|"code"|invalid_type/);
    }
  });
});

describe('connection options are checked, not ignored', () => {
  it('readonly accepts 1/true/yes/on and 0/false/no/off, in the query or X-MCP-Readonly', async () => {
    const readOnly = await toolNames((await makeToken(app.db.sql, ws, member, { scopes: ['read', 'triage'] })).token);
    expect(await toolNames(token, '?readonly=on')).toEqual(readOnly);
    expect(await toolNames(token, '', { 'x-mcp-readonly': 'YES' })).toEqual(readOnly);
    expect(await toolNames(token, '?readonly=off')).toContain('create_ticket');
  });

  it('an unknown readonly value or toolset name is refused at connect, listing the valid ones', async () => {
    await expect(mcpClient(app, token, '?toolsets=ticket')).rejects.toThrow(/toolsets: unknown toolset 'ticket'; the toolsets are tickets, board, time/);
    await expect(mcpClient(app, token, '', { 'x-mcp-toolsets': 'tickets,bord' })).rejects.toThrow(/X-MCP-Toolsets: unknown toolset 'bord'/);
    await expect(mcpClient(app, token, '?readonly=maybe')).rejects.toThrow(/readonly: use one of 1\/true\/yes\/on/);
    const raw = await post(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }), '?toolsets=ticket');
    expect(raw.status).toBe(400);
    expect(raw.json).toMatchObject({
      id: 9,
      error: { code: -32602, data: { code: 'invalid', reason: 'unknown_toolset', field: 'toolsets', value: 'ticket' } },
    });
    expect(raw.json.error.data.choices).toContain('tickets');
  });

  it('does not advertise tools.listChanged (the tools of a connection never change)', async () => {
    const c = await mcpClient(app, token);
    expect(c.getServerCapabilities()?.tools).toBeDefined();
    expect(c.getServerCapabilities()?.tools?.listChanged).toBeFalsy();
    await c.close();
  });
});

describe('an unexpected failure inside a tool', () => {
  it('is logged with its error and answered `internal` with no SQL text or stack', async () => {
    const failure = Object.assign(new Error('syntax error at or near "from"'), { query: 'select secret_column from hidden_table' });
    const broken = (() => {
      throw failure;
    }) as unknown as Db;
    const principal = (await app.verifier.verify(token, null, new Date())) as never;
    const logged: [unknown, string][] = [];
    const server = buildMcpServer(
      (p) => ({ sql: broken, principal: p, now: () => new Date() }),
      principal,
      { toolsets: null, readonly: false },
      (err, tool) => logged.push([err, tool]),
    );
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(clientSide);
    const r = (await client.callTool({ name: 'get_workflow', arguments: {} })) as Result;
    await client.close();
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toMatchObject({ code: 'internal', reason: null });
    const text = JSON.stringify(r);
    for (const leak of ['secret_column', 'hidden_table', 'syntax error', '    at ']) expect(text).not.toContain(leak);
    expect(logged).toEqual([[failure, 'get_workflow']]);
  });
});
