import { defineOp } from '../src/core/operation.ts';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { allTools } from '../src/mcp/registry.ts';
import { surfaceOf } from '../src/mcp/server.ts';
import { defineTool, runTool } from '../src/mcp/tool.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeToken, makeUser, makeWorkspace } from './helpers/factories.ts';
import { mcpClient } from './helpers/mcp.ts';

let app: TestApp;
let token: string;

beforeAll(async () => {
  app = await startTestApp();
  const ws = await makeWorkspace(app.db.sql);
  const owner = await makeUser(app.db.sql, ws, { role: 'owner' });
  // every scope, admin too: an Owner's full surface holds every tool (list_rates needs the admin scope)
  token = (await makeToken(app.db.sql, ws, owner, { scopes: ['read', 'write', 'triage', 'admin'] })).token;
});
afterAll(() => app.close());

/** Every tools/call in the MCP acceptance test files, by tool name (session helper, SDK client, or the Inspector CLI). */
function calledTools(): Set<string> {
  const dir = path.resolve('test');
  const names = new Set<string>();
  for (const file of readdirSync(dir).filter((f) => /^(mcp-|banks|documents).*\.test\.ts$/.test(f))) {
    const text = readFileSync(path.join(dir, file), 'utf8');
    for (const m of text.matchAll(/\.(?:ok|fail|call)\(\s*'([a-z_]+)'/g)) names.add(m[1]!);
    for (const m of text.matchAll(/callTool\(\{\s*name:\s*'([a-z_]+)'/g)) names.add(m[1]!);
    for (const m of text.matchAll(/--tool-name',\s*'([a-z_]+)'/g)) names.add(m[1]!);
  }
  return names;
}

describe('MCP tool registry', () => {
  it('names are unique snake_case verb_noun', () => {
    const names = allTools.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(n).toMatch(/^[a-z]+(_[a-z]+)+$/);
  });

  it("each write tool's hints as a client reads them from tools/list: additive tools are not destructive (issue 26)", async () => {
    const client = await mcpClient(app, token);
    const { tools } = await client.listTools();
    await client.close();
    const hints = (name: string) => {
      const a = tools.find((t) => t.name === name)!.annotations!;
      // what a client concludes, the specification's defaults applied (destructive true, idempotent false)
      return { destructive: a.destructiveHint ?? true, idempotent: a.idempotentHint ?? false, readOnly: a.readOnlyHint ?? false };
    };
    const expected: Record<string, [destructive: boolean, idempotent: boolean]> = {
      create_ticket: [false, false],
      update_ticket: [false, false],
      move_ticket: [false, false],
      add_comment: [false, false],
      edit_comment: [false, true],
      delete_comment: [true, true],
      link_tickets: [false, true],
      unlink_tickets: [true, true],
      set_parent: [false, true],
      add_codehost_link: [false, true],
      remove_codehost_link: [true, true],
      log_time: [false, false],
      update_time_entry: [false, true],
    };
    expect(
      allTools
        .filter((t) => t.writes)
        .map((t) => t.name)
        .sort(),
    ).toEqual(Object.keys(expected).sort());
    for (const [name, [destructive, idempotent]] of Object.entries(expected)) {
      expect(hints(name), name).toEqual({ destructive, idempotent, readOnly: false });
    }
  });

  it('every tool has a title, a description, annotations, an output schema, and described arguments', async () => {
    const client = await mcpClient(app, token);
    const { tools } = await client.listTools();
    await client.close();
    expect(tools.map((t) => t.name).sort()).toEqual(allTools.map((t) => t.name).sort());
    for (const tool of tools) {
      const def = allTools.find((t) => t.name === tool.name)!;
      expect(tool.title, tool.name).toBeTruthy();
      expect(tool.description!.length, tool.name).toBeGreaterThan(30);
      // hints the specification implies are left out: destructive/idempotent only on writing tools, idempotent only when true
      expect(tool.annotations, tool.name).toEqual(
        def.writes
          ? { readOnlyHint: false, destructiveHint: Boolean(def.destructive), ...(def.idempotent ? { idempotentHint: true } : {}), openWorldHint: false }
          : { readOnlyHint: true, openWorldHint: false },
      );
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      expect(tool.inputSchema.type, tool.name).toBe('object');
      for (const [arg, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
        const s = schema as { description?: string; enum?: unknown[]; anyOf?: { description?: string }[] };
        const described = s.description ?? s.anyOf?.find((x) => x.description)?.description;
        expect(described, `${tool.name}.${arg} has a description`).toBeTruthy();
      }
    }
  });

  it('every tool is called by an MCP acceptance test', () => {
    const called = calledTools();
    const missing = allTools.map((t) => t.name).filter((n) => !called.has(n));
    expect(missing).toEqual([]);
  });

  it('tools/list for a full-scope token stays under 40 KB of JSON', async () => {
    const res = await fetch(`${app.base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    const body = await res.text();
    const bytes = Buffer.byteLength(body);
    const parsed = JSON.parse(body) as { result: { tools: { name: string }[] } };
    console.log(`tools/list, full-scope owner token: ${parsed.result.tools.length} tools, ${bytes} bytes`);
    expect(parsed.result.tools).toHaveLength(allTools.length);
    expect(bytes).toBeLessThan(40 * 1024);
  });

  it('an unexpected failure is logged and answered as `internal`, without its message', async () => {
    const broken = defineTool({
      name: 'broken_tool',
      title: 'Broken',
      description: 'Fails the way a bug would.',
      toolset: 'workflow',
      op: defineOp({
        name: 'test.broken',
        action: 'workflow.read',
        input: z.object({}),
        output: null,
        run: async (): Promise<Record<string, never>> => {
          throw new Error('relation "secret_table" does not exist');
        },
      }),
      args: () => ({}),
      input: () => z.object({}),
      output: z.object({}),
    });
    const principal = { workspaceId: 'w', identityId: 'i', role: 'member', clientId: null, scopes: new Set(['read']), projectIds: null } as never;
    const logged: [unknown, string][] = [];
    const result = await runTool(broken, { sql: app.db.sql, principal, now: () => new Date() }, surfaceOf(principal), {}, undefined, (err, tool) =>
      logged.push([err, tool]),
    );
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ code: 'internal', reason: null });
    expect(JSON.stringify(result)).not.toContain('secret_table');
    expect(logged.map(([err, tool]) => [(err as Error).message, tool])).toEqual([['relation "secret_table" does not exist', 'broken_tool']]);
  });
});
