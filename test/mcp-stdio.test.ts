import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { cleanEnv } from './helpers/spawn.ts';

let app: TestApp;
let ws: Workspace;
let member: Person;
let token: string;

beforeAll(async () => {
  app = await startTestApp();
  ws = await makeWorkspace(app.db.sql);
  member = await makeUser(app.db.sql, ws);
  const project = await makeProject(app.db.sql, ws, { members: [{ person: member }] });
  for (let i = 0; i < 5; i++) await makeTicket(app.db.sql, ws, { projectId: project.id, reporterId: member.id, title: `Stdio ticket ${i}` });
  token = (await makeToken(app.db.sql, ws, member)).token;
});
afterAll(() => app.close());

interface Run {
  code: number | null;
  /** Every stdout line, parsed (stdout carries nothing but the protocol). */
  messages: any[];
  stderr: string;
}

/**
 * Runs the real `wt mcp`, writes `lines` to its stdin in one go, closes stdin and reads stdout
 * until the process exits by itself: what a client that sends its last call and hangs up sees.
 */
function wtMcp(lines: string[], env: Record<string, string> = {}, args: string[] = []): Promise<Run> {
  const child = spawn('node', [path.resolve('bin/wt.js'), 'mcp', ...args], {
    env: cleanEnv({ DATABASE_URL: app.db.url, WT_TOKEN: token, LOG_LEVEL: 'silent', ...env }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  child.stdin.on('error', () => {
    /* the process may refuse to start and close stdin first */
  });
  child.stdin.end(lines.map((l) => l + '\n').join(''));
  return new Promise((resolve) =>
    child.once('close', (code) =>
      resolve({
        code,
        messages: stdout
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l)),
        stderr,
      }),
    ),
  );
}

const init = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
const initialized = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });
const request = (id: number, method: string, params?: unknown) => JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
const byId = (run: Run, id: number | null) => run.messages.filter((m) => m.id === id);

describe('wt mcp over stdio', () => {
  it('answers every call it read before stdin closed, then exits 0', async () => {
    const run = await wtMcp([
      init,
      initialized,
      request(1, 'tools/call', { name: 'get_context_pack', arguments: {} }),
      request(2, 'tools/call', { name: 'search_tickets', arguments: { query: 'stdio' } }),
      request(3, 'tools/call', { name: 'get_workflow', arguments: {} }),
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(byId(run, 1)[0]?.result?.structuredContent).toBeDefined();
    expect(byId(run, 2)[0]?.result?.structuredContent?.items).toHaveLength(5);
    expect(byId(run, 3)[0]?.result?.structuredContent?.states).toBeDefined();
  });

  it('a line that is not JSON gets -32700, JSON that is not a message -32600, and the session goes on', async () => {
    const run = await wtMcp([
      init,
      'this is not json',
      '42',
      '[]',
      JSON.stringify({ jsonrpc: '2.0', id: 7 }),
      JSON.stringify({ id: 8, method: 'ping' }),
      request(9, 'ping'),
    ]);
    expect(run.code, run.stderr).toBe(0);
    const errors = byId(run, null).map((m) => m.error.code);
    expect(errors).toEqual([-32700, -32600, -32600]); // not JSON, 42, []
    // not a message, but its id could be read: the error answers it
    expect(byId(run, 7)).toMatchObject([{ error: { code: -32600 } }]);
    expect(byId(run, 8)).toMatchObject([{ error: { code: -32600 } }]);
    expect(byId(run, 9)).toEqual([{ jsonrpc: '2.0', id: 9, result: {} }]);
  });

  it('tools/call without params is -32602 with a short message; an unknown tool too; a missing tool says why', async () => {
    const readOnly = (await makeToken(app.db.sql, ws, member, { scopes: ['read'] })).token;
    const run = await wtMcp(
      [
        init,
        request(1, 'tools/call'),
        request(2, 'tools/call', { name: 'nope' }),
        request(3, 'tools/call', { name: 'create_ticket', arguments: { title: 'x' } }),
      ],
      { WT_TOKEN: readOnly },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(byId(run, 1)[0].error).toMatchObject({ code: -32602, message: expect.stringMatching(/^Invalid params for tools\/call: params: /) });
    expect(byId(run, 1)[0].error.message).not.toMatch(/\n/);
    expect(byId(run, 2)[0].error).toMatchObject({ code: -32602, message: expect.stringMatching(/^Unknown tool: nope/) });
    expect(byId(run, 3)[0].result).toMatchObject({
      isError: true,
      structuredContent: { code: 'forbidden', reason: 'tool_not_available', details: { cause: 'missing_scope', scope: 'write' } },
    });
  });

  it('WT_MCP_READONLY and --readonly narrow the tools; an unknown toolset or readonly value refuses to start', async () => {
    const list = [init, request(1, 'tools/list')];
    const names = (run: Run) => byId(run, 1)[0].result.tools.map((t: { name: string }) => t.name);
    const env = await wtMcp(list, { WT_MCP_READONLY: 'on' });
    expect(names(env)).toContain('search_tickets');
    expect(names(env)).not.toContain('create_ticket');
    const flag = await wtMcp(list, {}, ['--readonly', '--toolsets', 'workflow']);
    expect(names(flag)).toEqual(['get_workflow', 'list_projects', 'list_people', 'list_clients']);

    const typo = await wtMcp(list, { WT_MCP_TOOLSETS: 'ticket' });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/WT_MCP_TOOLSETS: unknown toolset 'ticket'; the toolsets are tickets, board/);
    expect(typo.messages).toEqual([]);
    const bad = await wtMcp(list, { WT_MCP_READONLY: 'sure' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/WT_MCP_READONLY: use one of/);
  });
});
