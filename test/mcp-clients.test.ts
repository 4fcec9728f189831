import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeClient, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { mcpClient, mcpSession, type McpSession } from './helpers/mcp.ts';

/** list_clients (issue 22): the agency's clients for workspace users; client users never see the tool; no admin write tools. */

let app: TestApp;
let ws: Workspace;
let member: Person;
let clientUser: Person;
const sessions: McpSession[] = [];

const session = async (person: Person, scopes?: ('read' | 'write' | 'triage' | 'admin')[]) => {
  const s = await mcpSession(app, (await makeToken(app.db.sql, ws, person, scopes ? { scopes } : {})).token);
  sessions.push(s);
  return s;
};

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  const acme = await makeClient(sql, ws, { name: 'Acme', code: 'ACME' });
  const old = await makeClient(sql, ws, { name: 'Bygone', code: 'BYG' });
  await sql`update clients set archived_at = now(), locale = 'de-DE' where id = ${old.id}`;
  await makeClient(sql, ws, { name: 'Globex', code: 'GLX' });
  member = await makeUser(sql, ws, { role: 'member' });
  clientUser = await makeUser(sql, ws, { role: 'client_elevated', clientId: acme.id });
});
afterAll(async () => {
  for (const s of sessions) await s.close();
  await app.close();
});

describe('list_clients', () => {
  it('lists the active clients by name to a member with a read token; archived ones on request', async () => {
    const s = await session(member, ['read']);
    const out = await s.ok('list_clients');
    expect(out.clients.map((c: { code: string }) => c.code)).toEqual(['ACME', 'GLX']);
    expect(out.clients[0]).toEqual({ id: expect.any(String), code: 'ACME', name: 'Acme', locale: 'en-GB', archived: false });
    const all = await s.ok('list_clients', { includeArchived: true });
    expect(all.clients.map((c: { code: string; archived: boolean }) => [c.code, c.archived])).toEqual([
      ['ACME', false],
      ['BYG', true],
      ['GLX', false],
    ]);
    const text = ((await s.call('list_clients')).content as { text: string }[])[0]!.text;
    expect(text).toBe('ACME Acme (en-GB)\nGLX Globex (en-GB)');
  });

  it('a bad argument is an invalid result, not a protocol error', async () => {
    const s = await session(member, ['read']);
    const r = await s.fail('list_clients', { includeArchived: 'yes' });
    expect(r.code).toBe('invalid');
  });

  it('client users do not get the tool', async () => {
    const client = await mcpClient(app, (await makeToken(app.db.sql, ws, clientUser)).token);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).not.toContain('list_clients');
      const r = await client.callTool({ name: 'list_clients', arguments: {} });
      expect(r.isError).toBe(true);
      expect(r.structuredContent).toMatchObject({ code: 'forbidden', reason: 'tool_not_available' });
    } finally {
      await client.close();
    }
  });

  it('no administrative write tool exists, even for an owner with an admin-scope token', async () => {
    const owner = await makeUser(app.db.sql, ws, { role: 'owner' });
    const s = await session(owner, ['read', 'write', 'triage', 'admin']);
    const names = s.tools.map((t) => t.name);
    expect(names).toContain('list_clients');
    for (const n of names) expect(n).not.toMatch(/^(create|update|archive|delete|set)_(client|project|member|categor|recipient)/);
  });
});
