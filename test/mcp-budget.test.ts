import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

/** The raw HTTP body of one tools/call, as a client receives it. */
async function callBytes(args: Record<string, unknown>): Promise<{ bytes: number; result: any }> {
  const res = await fetch(`${app.base}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_tickets', arguments: args } }),
  });
  const body = await res.text();
  return { bytes: Buffer.byteLength(body), result: JSON.parse(body).result };
}

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
