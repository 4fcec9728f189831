import http from 'node:http';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeProject, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { mcpClient } from './helpers/mcp.ts';
import { cleanEnv } from './helpers/spawn.ts';

let app: TestApp;
let ws: Workspace;
let member: Person;
let token: string;

beforeAll(async () => {
  app = await startTestApp();
  ws = await makeWorkspace(app.db.sql);
  member = await makeUser(app.db.sql, ws);
  token = (await makeToken(app.db.sql, ws, member)).token;
});
afterAll(() => app.close());

const rpc = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${app.base}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
const listRequest = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };

describe('MCP over Streamable HTTP', () => {
  it('401 with WWW-Authenticate without a token, and for a bad one', async () => {
    for (const headers of [{}, { authorization: 'Bearer wt_' + 'x'.repeat(40) }] as Record<string, string>[]) {
      const res = await rpc(listRequest, headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect((await res.json()).error.code).toBe('unauthenticated');
    }
  });

  it('refuses a foreign Host or Origin (DNS rebinding)', async () => {
    const auth = { authorization: `Bearer ${token}` };
    // fetch cannot set Host, so this one goes through node:http
    const host = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = http.request(`${app.base}/mcp`, { method: 'POST', headers: { ...auth, host: 'evil.example', 'content-type': 'application/json' } }, (res) => {
        let data = '';
        res.on('data', (d) => (data += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(data) }));
      });
      req.on('error', reject);
      req.end(JSON.stringify(listRequest));
    });
    expect(host.status).toBe(403);
    expect(host.body.error.details.reason).toBe('host_not_allowed');
    const origin = await rpc(listRequest, { ...auth, origin: 'http://evil.example' });
    expect(origin.status).toBe(403);
    expect((await origin.json()).error.details.reason).toBe('origin_not_allowed');
    const sameOrigin = await rpc(listRequest, { ...auth, origin: 'http://localhost:5173' });
    expect(sameOrigin.status).toBe(200);
  });

  it('the SDK client connects, lists tools and calls one; structuredContent matches the output schema', async () => {
    const client = await mcpClient(app, token);
    const { tools } = await client.listTools();
    const wf = tools.find((t) => t.name === 'get_workflow')!;
    expect(wf.annotations).toEqual({ readOnlyHint: true, openWorldHint: false });
    expect(wf.outputSchema).toBeDefined();
    const result = await client.callTool({ name: 'get_workflow', arguments: {} });
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as any).states.map((s: any) => s.key)).toContain('todo');
    // the text is a short rendering for clients that read only text, not a second copy of the JSON
    const text = (result.content as any)[0].text as string;
    expect(text).toMatch(/^States: .*Todo/);
    expect(() => JSON.parse(text)).toThrow();
    await client.close();
  });

  it('a bad argument is an isError result with the REST code and reason, not a protocol error', async () => {
    const client = await mcpClient(app, token);
    const result = await client.callTool({ name: 'list_changes', arguments: { after: -5 } });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ code: 'invalid', reason: 'validation', details: { field: 'after' } });
    await client.close();
  });

  it('the token decides the surface: no write scope, no write tools; read-only and toolsets narrow it', async () => {
    const readOnly = (await makeToken(app.db.sql, ws, member, { scopes: ['read'] })).token;
    const names = async (t: string, q = '') => {
      const c = await mcpClient(app, t, q);
      const r = (await c.listTools()).tools.map((x) => x.name);
      await c.close();
      return r;
    };
    const full = await names(token);
    expect(full).toContain('get_workflow');
    const ro = await names(readOnly);
    expect(ro.length).toBeGreaterThan(0);
    expect(await names(token, '?readonly=1')).toEqual(ro);
    expect(await names(token, '?toolsets=workflow')).toEqual(['get_workflow', 'list_projects', 'list_people', 'list_clients']);
    const none = (await makeToken(app.db.sql, ws, member, { scopes: ['write'] })).token;
    expect(await names(none)).toEqual([]);
  });
});

describe('MCP over stdio (wt mcp)', () => {
  it('serves the same tools with WT_TOKEN, and refuses to start without one', async () => {
    const restricted = await makeProject(app.db.sql, ws, { members: [{ person: member }] });
    const t = (await makeToken(app.db.sql, ws, member, { projectIds: [restricted.id] })).token;
    const transport = new StdioClientTransport({
      command: 'node',
      args: [path.resolve('bin/wt.js'), 'mcp'],
      env: cleanEnv({ DATABASE_URL: app.db.url, WT_TOKEN: t, LOG_LEVEL: 'silent' }) as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'stdio-test', version: '1.0.0' });
    await client.connect(transport);
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name)).toContain('get_workflow');
    const r = await client.callTool({ name: 'get_workflow', arguments: {} });
    expect((r.structuredContent as any).priorities).toHaveLength(4);
    // the allow-list's only project is the default; what stdio creates carries source "mcp"
    const created = await client.callTool({ name: 'create_ticket', arguments: { title: 'Over stdio' } });
    expect(created.isError).toBeFalsy();
    const page = await app.call('GET', `/api/w/${ws.slug}/tickets/${(created.structuredContent as any).humanId}`, { token: t });
    expect(page.body).toMatchObject({ source: 'mcp', project: { id: restricted.id }, reporter: { id: member.id } });
    const found = await client.callTool({ name: 'search_tickets', arguments: { query: 'stdio' } });
    expect((found.structuredContent as any).items.map((x: any) => x.title)).toEqual(['Over stdio']);
    await client.close();
  }, 30_000);
});
