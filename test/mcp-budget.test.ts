import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDemo } from '../src/core/demo/seed.ts';
import { allTools } from '../src/mcp/registry.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeProject, makeTicket, makeToken, makeUser, makeWorkspace } from './helpers/factories.ts';
import { mcpSession } from './helpers/mcp.ts';

let app: TestApp;
let token: string;

const TITLES = [
  'Checkout page shows the wrong currency for EU customers',
  'Add CSV export to the monthly invoice report',
  'Login with SSO fails after password reset',
  'Improve loading time of the product catalogue',
  'Newsletter signup form rejects plus addresses',
];

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  const ws = await makeWorkspace(sql);
  const member = await makeUser(sql, ws, { name: 'Alexandra Johansson' });
  const project = await makeProject(sql, ws, { key: 'WEBSHOP', members: [{ person: member }] });
  for (let i = 0; i < 50; i++) {
    await makeTicket(sql, ws, {
      projectId: project.id,
      title: `${TITLES[i % TITLES.length]} (#${i})`,
      assigneeId: i % 2 === 0 ? member.id : null,
      dueDate: i % 3 === 0 ? '2031-06-30' : null,
      priorityKey: ['urgent', 'high', 'normal', 'low'][i % 4],
      stateKey: ['todo', 'in_progress', 'in_review'][i % 3],
    });
  }
  token = (await makeToken(sql, ws, member)).token;
});
afterAll(() => app.close());

/** The raw HTTP body of one JSON-RPC request, as a client receives it. */
async function rpcBytes(method: string, params: Record<string, unknown>, as = token): Promise<{ bytes: number; result: any }> {
  const res = await fetch(`${app.base}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${as}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = await res.text();
  return { bytes: Buffer.byteLength(body), result: JSON.parse(body).result };
}

const callBytes = (args: Record<string, unknown>) => rpcBytes('tools/call', { name: 'search_tickets', arguments: args });

const KB = 1024;

describe('tools/list budget', () => {
  it('a full-scope token lists every tool, each with a title, in under 40 KB (printed per tool)', async () => {
    const sql = app.db.sql;
    const ws = await makeWorkspace(sql);
    const owner = await makeUser(sql, ws, { role: 'owner' });
    const full = (await makeToken(sql, ws, owner, { scopes: ['read', 'write', 'triage', 'admin'] })).token;
    const { bytes, result } = await rpcBytes('tools/list', {}, full);
    expect(result.tools.map((t: any) => t.name).sort()).toEqual(allTools.map((t) => t.name).sort());
    const sizes = result.tools.map((t: any) => [t.name, Buffer.byteLength(JSON.stringify(t))] as const).sort((a: any, b: any) => b[1] - a[1]);
    console.log(
      `tools/list for a full-scope token: ${bytes} bytes (${(bytes / KB).toFixed(1)} KB), ${result.tools.length} tools\n` +
        sizes.map(([name, n]: [string, number]) => `  ${name.padEnd(24)} ${n}`).join('\n'),
    );
    for (const t of result.tools) expect(t.title, `${t.name} has a title`).toMatch(/\S/);
    expect(bytes).toBeLessThan(40 * KB);
  });
});

describe('get_ticket budget', () => {
  it("the demo's largest ticket answers in under 8 KB, its text a short summary", async () => {
    const demo = await ensureDemo(app.db.sql);
    const owner = demo.people.owner.token;
    const tickets = await app.db.sql<{ humanId: string }[]>`
      select coalesce(p.key, 'INBOX') || '-' || t.number as "humanId" from tickets t left join projects p on p.id = t.project_id
      join workspaces w on w.id = t.workspace_id where w.slug = ${demo.slug}`;
    expect(tickets.length).toBeGreaterThan(5);
    let largest = { humanId: '', bytes: 0, result: null as any };
    for (const t of tickets) {
      const r = await rpcBytes('tools/call', { name: 'get_ticket', arguments: { ticket: t.humanId } }, owner);
      expect(r.result.isError, JSON.stringify(r.result)).toBeFalsy();
      if (r.bytes > largest.bytes) largest = { humanId: t.humanId, ...r };
    }
    const text = largest.result.content[0].text as string;
    console.log(
      `get_ticket over ${tickets.length} demo tickets: largest ${largest.humanId} ${largest.bytes} bytes ` +
        `(structuredContent ${JSON.stringify(largest.result.structuredContent).length}, text ${text.length})`,
    );
    expect(largest.bytes).toBeLessThan(8 * KB);
    // sent once: the text is a summary, not the JSON again
    expect(text.length).toBeLessThan(JSON.stringify(largest.result.structuredContent).length / 2);
    expect(text.split('\n')[0]).toContain(largest.humanId);
  });
});

describe('result size budget', () => {
  it('search_tickets with default options over 50 tickets answers under 8 KB', async () => {
    const { bytes, result } = await callBytes({});
    const full = await callBytes({ limit: 50 });
    console.log(
      `search_tickets over 50 tickets: default (${result.structuredContent.items.length} items) ${bytes} bytes; ` +
        `limit 50: ${full.bytes} bytes (structuredContent ${JSON.stringify(full.result.structuredContent).length}, text ${full.result.content[0].text.length})`,
    );
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent.items).toHaveLength(20);
    expect(result.structuredContent.nextCursor).toEqual(expect.any(String));
    expect(bytes).toBeLessThan(8 * 1024);
    // the text copy is a rendering, one line per ticket, not a second JSON
    expect(full.result.content[0].text.split('\n')).toHaveLength(50);
    expect(full.result.structuredContent.items).toHaveLength(50);
  });

  it('a whole page of 50 is still reachable in pages of the default size, in the same order', async () => {
    const s = await mcpSession(app, token);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await s.ok('search_tickets', cursor ? { cursor } : {});
      seen.push(...page.items.map((t: any) => t.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    const all = await s.ok('search_tickets', { limit: 50 });
    expect(seen).toEqual(all.items.map((t: any) => t.id));
    await s.close();
  });
});
