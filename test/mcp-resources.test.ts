import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  makeBillingRun,
  makeClient,
  makeDocument,
  makePeriod,
  makeProject,
  makeTicket,
  makeToken,
  makeUser,
  makeWorkspace,
  type Workspace,
} from './helpers/factories.ts';
import { mcpClient } from './helpers/mcp.ts';

/**
 * Documents and tickets as MCP resources (issue 14), through the SDK's own client: resources/list
 * (paged), resources/read under the download rule, the ticket resource template.
 */

let app: TestApp;
let ws: Workspace;
let shop: { id: string; key: string };
let ticket: { humanId: string };
const docs = {} as Record<'html' | 'csv' | 'pdf' | 'voided', { id: string; number: string }>;
const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n%'), Buffer.from([0xe2, 0xe3, 0xcf, 0xd3, 0x00, 0xff]), Buffer.from('\n%%EOF\n')]);
const clients: Client[] = [];
const tokens = {} as Record<'owner' | 'member' | 'restricted', string>;

async function connect(token: string): Promise<Client> {
  const c = await mcpClient(app, token);
  clients.push(c);
  return c;
}

/** The JSON-RPC error a request fails with. */
async function rpcFailure(p: Promise<unknown>): Promise<{ code: number; message: string; data?: any }> {
  const err = (await p.then(
    () => null,
    (e: unknown) => e,
  )) as { code: number; message: string; data?: any } | null;
  expect(err, 'the request fails').not.toBeNull();
  return err!;
}

const uri = (id: string) => `worktracker://documents/${id}`;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  const acme = await makeClient(sql, ws, { name: 'Acme' });
  const globex = await makeClient(sql, ws, { name: 'Globex' });
  const owner = await makeUser(sql, ws, { role: 'owner' });
  const member = await makeUser(sql, ws);
  shop = await makeProject(sql, ws, { billingClientId: acme.id, members: [{ person: owner }] });
  ticket = await makeTicket(sql, ws, { projectId: shop.id, title: 'Read as a resource', description: 'Seen through resources/read' });
  const period = await makePeriod(sql, ws, { start: '2025-01-01', end: '2025-01-31', closed: true });
  const run = await makeBillingRun(sql, ws, { periodId: period.id });
  docs.html = await makeDocument(sql, ws, { runId: run.id, clientId: acme.id, number: 'ACME-2025-0001' });
  docs.pdf = await makeDocument(sql, ws, { runId: run.id, clientId: acme.id, number: 'ACME-2025-0001', format: 'pdf' });
  docs.csv = await makeDocument(sql, ws, { runId: run.id, clientId: acme.id, projectId: shop.id, number: 'ACME-2025-0002', format: 'csv' });
  docs.voided = await makeDocument(sql, ws, { runId: run.id, clientId: globex.id, number: 'GLOBEX-2025-0001', voided: true });
  await sql`update documents set content = ${PDF}, bytes = ${PDF.length} where id = ${docs.pdf.id}`;
  await sql`update documents set content = ${Buffer.from('hours;1,50\r\n')}, bytes = 12 where id = ${docs.csv.id}`;
  tokens.owner = (await makeToken(sql, ws, owner)).token;
  tokens.member = (await makeToken(sql, ws, member)).token;
  tokens.restricted = (await makeToken(sql, ws, owner, { projectIds: [shop.id] })).token;
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await app.close();
});

describe('the resources capability', () => {
  it('is declared, with name, version and instructions that say how to start', async () => {
    const c = await connect(tokens.owner);
    expect(c.getServerCapabilities()).toMatchObject({ tools: {}, resources: {} });
    expect(c.getServerVersion()).toMatchObject({ name: 'worktracker', version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    const instructions = c.getInstructions()!;
    expect(instructions).toContain('get_context_pack');
    expect(instructions).toContain('list_projects');
    expect(instructions).toContain('worktracker://tickets/{humanId}');
  });
});

describe('documents as resources', () => {
  it('the owner lists every document that can be downloaded now (not the voided one), with mime type and size', async () => {
    const c = await connect(tokens.owner);
    const { resources, nextCursor } = await c.listResources();
    expect(nextCursor).toBeUndefined();
    expect(resources.map((r) => r.uri).sort()).toEqual([docs.html, docs.pdf, docs.csv].map((d) => uri(d.id)).sort());
    expect(resources.find((r) => r.uri === uri(docs.pdf.id))).toEqual({
      uri: uri(docs.pdf.id),
      name: 'ACME-2025-0001.pdf',
      title: 'Timesheet ACME-2025-0001 (Acme, 2025-01-01)',
      mimeType: 'application/pdf',
      size: PDF.length,
    });
  });

  it('reads html and csv as text, pdf as a blob of the stored bytes', async () => {
    const c = await connect(tokens.owner);
    const html = (await c.readResource({ uri: uri(docs.html.id) })).contents;
    expect(html).toEqual([{ uri: uri(docs.html.id), mimeType: expect.stringMatching(/^text\/html/), text: '<p>ACME-2025-0001</p>' }]);
    const csv = (await c.readResource({ uri: uri(docs.csv.id) })).contents;
    expect(csv).toEqual([{ uri: uri(docs.csv.id), mimeType: expect.stringMatching(/^text\/csv/), text: 'hours;1,50\r\n' }]);
    const [pdf] = (await c.readResource({ uri: uri(docs.pdf.id) })).contents as { blob: string; mimeType: string }[];
    expect(pdf!.mimeType).toBe('application/pdf');
    expect(Buffer.from(pdf!.blob, 'base64').equals(PDF)).toBe(true);
  });

  it('a voided document says why; an unknown or malformed id is not found', async () => {
    const c = await connect(tokens.owner);
    const voided = await rpcFailure(c.readResource({ uri: uri(docs.voided.id) }));
    expect(voided).toMatchObject({ code: -32002, data: { code: 'conflict', reason: 'document_voided' } });
    for (const bad of [uri('00000000-0000-4000-8000-000000000000'), uri('ACME-2025-0001'), 'worktracker://nothing/1', 'https://example.test/'])
      expect(await rpcFailure(c.readResource({ uri: bad }))).toMatchObject({ code: -32002, message: expect.stringContaining('Resource not found') });
  });

  it('a member without document access: nothing listed, every read refused as not found', async () => {
    const c = await connect(tokens.member);
    expect((await c.listResources()).resources).toEqual([]);
    for (const d of [docs.html, docs.csv, docs.pdf]) {
      const err = await rpcFailure(c.readResource({ uri: uri(d.id) }));
      expect(err).toMatchObject({ code: -32002, message: `MCP error -32002: Resource not found: ${uri(d.id)}` });
      // it learns nothing about the document
      expect(JSON.stringify(err.data)).not.toContain('forbidden');
    }
  });

  it('a project-restricted token: combined documents are not listed and not read; its project document is', async () => {
    const c = await connect(tokens.restricted);
    expect((await c.listResources()).resources.map((r) => r.uri)).toEqual([uri(docs.csv.id)]);
    expect(await rpcFailure(c.readResource({ uri: uri(docs.html.id) }))).toMatchObject({ code: -32002 });
    expect((await c.readResource({ uri: uri(docs.csv.id) })).contents[0]).toMatchObject({ text: 'hours;1,50\r\n' });
  });

  it('list_documents and get_document link to the resources', async () => {
    const c = await connect(tokens.owner);
    const listed = (await c.callTool({ name: 'list_documents', arguments: {} })).content as any[];
    const links = listed.filter((b) => b.type === 'resource_link');
    expect(links.map((l) => l.uri).sort()).toEqual([docs.html, docs.pdf, docs.csv].map((d) => uri(d.id)).sort());
    // every link can be read
    for (const l of links) expect((await c.readResource({ uri: l.uri })).contents).toHaveLength(1);
    const one = (await c.callTool({ name: 'get_document', arguments: { id: docs.csv.id } })).content as any[];
    expect(one.find((b) => b.type === 'resource_link')).toMatchObject({ uri: uri(docs.csv.id), name: 'ACME-2025-0002.csv' });
  });

  it('pages: 50 per page, then nextCursor; every document once, newest first; a bad cursor is invalid params', async () => {
    const sql = app.db.sql;
    const big = await makeWorkspace(sql);
    const client = await makeClient(sql, big, { name: 'Many' });
    const period = await makePeriod(sql, big, { start: '2025-02-01', end: '2025-02-28', closed: true });
    const run = await makeBillingRun(sql, big, { periodId: period.id });
    const made: string[] = [];
    for (let i = 0; i < 56; i++) made.push((await makeDocument(sql, big, { runId: run.id, clientId: client.id, number: `MANY-${i}`, version: i + 1 })).id);
    const owner = await makeUser(sql, big, { role: 'owner' });
    const c = await connect((await makeToken(sql, big, owner)).token);
    const first = await c.listResources();
    expect(first.resources).toHaveLength(50);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await c.listResources({ cursor: first.nextCursor! });
    expect(second.resources).toHaveLength(6);
    expect(second.nextCursor).toBeUndefined();
    const seen = [...first.resources, ...second.resources].map((r) => r.uri);
    expect(seen[0]).toBe(uri(made[55]!));
    expect(new Set(seen).size).toBe(56);
    expect(seen.sort()).toEqual(made.map(uri).sort());
    expect(await rpcFailure(c.listResources({ cursor: 'not-a-cursor' }))).toMatchObject({ code: -32602, data: { reason: 'bad_cursor' } });
  });
});

describe('malformed resource requests', () => {
  it('resources/read without a uri is invalid params with a one-line message', async () => {
    const res = await fetch(`${app.base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.owner}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'resources/read', params: {} }),
    });
    const body = await res.json();
    expect(body).toMatchObject({ id: 7, error: { code: -32602, message: expect.stringContaining('Send params {"uri": "worktracker://...'.slice(0, 20)) } });
    expect(body.error.message).not.toContain('\n');
  });
});

describe('tickets as resources', () => {
  it('a resource template names worktracker://tickets/{humanId}', async () => {
    const c = await connect(tokens.owner);
    const { resourceTemplates } = await c.listResourceTemplates();
    expect(resourceTemplates.find((t) => t.name === 'ticket')).toMatchObject({ uriTemplate: 'worktracker://tickets/{humanId}', mimeType: 'application/json' });
  });

  it('reads the compact page as JSON, the one get_ticket answers', async () => {
    const c = await connect(tokens.owner);
    const [content] = (await c.readResource({ uri: `worktracker://tickets/${ticket.humanId}` })).contents as { text: string; mimeType: string }[];
    expect(content!.mimeType).toBe('application/json');
    const page = JSON.parse(content!.text);
    const viaTool = (await c.callTool({ name: 'get_ticket', arguments: { ticket: ticket.humanId } })).structuredContent as any;
    expect(page).toEqual(viaTool);
    expect(page).toMatchObject({ humanId: ticket.humanId, title: 'Read as a resource', description: 'Seen through resources/read' });
    expect(page.permissions.moveState.map((s: any) => s.name)).toContain('In review');
  });

  it('a ticket the caller cannot see is not found, like one that does not exist', async () => {
    const c = await connect(tokens.member);
    const hidden = await rpcFailure(c.readResource({ uri: `worktracker://tickets/${ticket.humanId}` }));
    const missing = await rpcFailure(c.readResource({ uri: 'worktracker://tickets/NOPE-1' }));
    expect(hidden).toMatchObject({ code: -32002 });
    expect(missing.code).toBe(-32002);
  });
});

describe('OAuth discovery (RFC 9728)', () => {
  it('the protected resource metadata names /mcp and Bearer tokens in the header', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const res = await fetch(`${app.base}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const body = await res.json();
      expect(body).toMatchObject({ resource: `${app.base}/mcp`, bearer_methods_supported: ['header'] });
      expect(body.scopes_supported).toEqual(['read', 'write', 'triage']);
    }
  });

  it('a 401 from /mcp carries resource_metadata pointing at that document', async () => {
    for (const authorization of [undefined, 'Bearer wt_nope']) {
      const res = await fetch(`${app.base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).toBe(401);
      const challenge = res.headers.get('www-authenticate')!;
      expect(challenge).toMatch(/^Bearer /);
      const metadata = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
      expect(metadata).toBe(`${app.base}/.well-known/oauth-protected-resource/mcp`);
      expect((await (await fetch(metadata!)).json()).resource).toBe(`${app.base}/mcp`);
    }
  });
});
