import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeBillingRun, makeClient, makeDocument, makePeriod, makeProject, makeToken, makeUser, makeWorkspace, type Workspace } from './helpers/factories.ts';
import { mcpSession, type McpSession } from './helpers/mcp.ts';

let app: TestApp;
let ws: Workspace;
let acme: { id: string; code: string };
let run: { id: string };
let s: McpSession;
let shop: { id: string };
const docs = {} as Record<'html' | 'csv' | 'pdf' | 'voided', { id: string; number: string }>;
const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n%'), Buffer.from([0xe2, 0xe3, 0xcf, 0xd3, 0x00, 0xff]), Buffer.from('\n%%EOF\n')]);

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  acme = await makeClient(sql, ws, { name: 'Acme' });
  const globex = await makeClient(sql, ws, { name: 'Globex' });
  shop = await makeProject(sql, ws, { billingClientId: acme.id });
  const period = await makePeriod(sql, ws, { start: '2025-01-01', end: '2025-01-31', closed: true });
  run = await makeBillingRun(sql, ws, { periodId: period.id });
  docs.html = await makeDocument(sql, ws, {
    runId: run.id,
    clientId: acme.id,
    number: 'ACME-2025-0001',
    deliveries: [{ email: 'ap@acme.test', state: 'sent' }],
  });
  docs.csv = await makeDocument(sql, ws, { runId: run.id, clientId: acme.id, projectId: shop.id, number: 'ACME-2025-0002', format: 'csv' });
  docs.voided = await makeDocument(sql, ws, { runId: run.id, clientId: globex.id, number: 'GLOBEX-2025-0001', voided: true });
  await sql`update documents set content = ${Buffer.from('hours;1,50\r\n')} where id = ${docs.csv.id}`;
  const owner = await makeUser(sql, ws, { role: 'owner' });
  s = await mcpSession(app, (await makeToken(sql, ws, owner)).token);
});
afterAll(async () => {
  await s.close();
  await app.close();
});

describe('list_documents', () => {
  it('the REST list in compact form, with the scope', async () => {
    const out = await s.ok('list_documents', {});
    expect(out.scope).toBe('all');
    expect(out.documents.map((d: any) => d.number).sort()).toEqual(['ACME-2025-0001', 'ACME-2025-0002', 'GLOBEX-2025-0001']);
    const doc = out.documents.find((d: any) => d.number === 'ACME-2025-0001');
    expect(doc).toEqual({
      id: expect.any(String),
      number: 'ACME-2025-0001',
      runId: run.id,
      scope: 'combined',
      client: 'Acme',
      project: null,
      periodStart: '2025-01-01',
      format: 'html',
      version: 1,
      bytes: expect.any(Number),
      voided: false,
      redacted: false,
      createdAt: expect.any(String),
      deliveries: [{ email: 'ap@acme.test', state: 'sent' }],
    });
    expect(out.documents.find((d: any) => d.number === 'GLOBEX-2025-0001').voided).toBe(true);
  });

  it('filters by client (id, code or name) and run', async () => {
    expect((await s.ok('list_documents', { client: 'acme' })).documents).toHaveLength(2);
    expect((await s.ok('list_documents', { client: acme.code, runId: run.id })).documents).toHaveLength(2);
    expect((await s.ok('list_documents', { runId: '00000000-0000-4000-8000-000000000000' })).documents).toEqual([]);
    expect(await s.fail('list_documents', { client: 'Initech' })).toMatchObject({ code: 'invalid', reason: 'unknown_client' });
    expect(await s.fail('list_documents', { runId: 'last' })).toMatchObject({ code: 'invalid', reason: 'validation', details: { field: 'runId' } });
  });

  it('nothing to download: an empty list with scope none, not an error', async () => {
    const member = await makeUser(app.db.sql, ws);
    const m = await mcpSession(app, (await makeToken(app.db.sql, ws, member, { scopes: ['read'] })).token);
    expect(await m.ok('list_documents', {})).toEqual({ scope: 'none', documents: [] });
    await m.close();
  });
});

describe('get_document', () => {
  beforeAll(async () => {
    // the pdf of Acme's timesheet, made after the list tests counted the documents
    docs.pdf = await makeDocument(app.db.sql, ws, { runId: run.id, clientId: acme.id, number: 'ACME-2025-0001', format: 'pdf' });
    await app.db.sql`update documents set content = ${PDF}, bytes = ${PDF.length} where id = ${docs.pdf.id}`;
  });

  it('html: the fields, then the file as text', async () => {
    const r = await s.call('get_document', { id: docs.html.id });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toEqual({
      id: docs.html.id,
      number: 'ACME-2025-0001',
      runId: run.id,
      scope: 'combined',
      client: 'Acme',
      project: null,
      periodStart: '2025-01-01',
      format: 'html',
      version: 1,
      bytes: '<p>ACME-2025-0001</p>'.length,
      voided: false,
      redacted: false,
      createdAt: expect.any(String),
    });
    // a line about it (not a second JSON copy), the file, and the link to its resource
    expect(r.content).toEqual([
      { type: 'text', text: `ACME-2025-0001.html v1 Acme 2025-01-01 [${docs.html.id}], 21 bytes` },
      { type: 'text', text: '<p>ACME-2025-0001</p>' },
      {
        type: 'resource_link',
        uri: `worktracker://documents/${docs.html.id}`,
        name: 'ACME-2025-0001.html',
        title: 'Timesheet ACME-2025-0001 (Acme, 2025-01-01)',
        mimeType: expect.stringMatching(/^text\/html/),
        size: 21,
      },
    ]);
  });

  it('csv: the file as text, unchanged', async () => {
    const r = await s.call('get_document', { id: docs.csv.id });
    expect(r.structuredContent).toMatchObject({ number: 'ACME-2025-0002', format: 'csv', scope: 'project', project: expect.any(String) });
    expect(r.content[1]).toEqual({ type: 'text', text: 'hours;1,50\r\n' });
  });

  it('pdf: an embedded resource blob, base64 of the stored bytes', async () => {
    const r = await s.call('get_document', { id: docs.pdf.id });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ format: 'pdf', bytes: PDF.length });
    expect(r.content).toHaveLength(3);
    expect(r.content[2]).toMatchObject({ type: 'resource_link', uri: `worktracker://documents/${docs.pdf.id}`, mimeType: 'application/pdf' });
    const block = r.content[1] as { type: string; resource: { uri: string; mimeType: string; blob: string } };
    expect(block).toEqual({
      type: 'resource',
      resource: { uri: `worktracker://documents/${docs.pdf.id}`, mimeType: 'application/pdf', blob: PDF.toString('base64') },
    });
    expect(Buffer.from(block.resource.blob, 'base64').equals(PDF)).toBe(true);
  });

  it('the download rule: a project-restricted token asking for a combined document is refused', async () => {
    const owner = await makeUser(app.db.sql, ws, { role: 'owner' });
    const restricted = await mcpSession(app, (await makeToken(app.db.sql, ws, owner, { projectIds: [shop.id] })).token);
    expect(await restricted.fail('get_document', { id: docs.html.id })).toMatchObject({
      code: 'forbidden',
      reason: 'combined_document_forbidden',
    });
    expect((await restricted.ok('get_document', { id: docs.csv.id })).number).toBe('ACME-2025-0002');
    await restricted.close();
    const member = await makeUser(app.db.sql, ws);
    const m = await mcpSession(app, (await makeToken(app.db.sql, ws, member, { scopes: ['read'] })).token);
    expect(await m.fail('get_document', { id: docs.csv.id })).toMatchObject({ code: 'forbidden', reason: 'no_document_access' });
    await m.close();
  });

  it('voided is a conflict; an unknown id not found; a malformed one invalid', async () => {
    expect(await s.fail('get_document', { id: docs.voided.id })).toMatchObject({ code: 'conflict', reason: 'document_voided' });
    expect(await s.fail('get_document', { id: '00000000-0000-4000-8000-000000000000' })).toMatchObject({
      code: 'not_found',
      reason: 'unknown_document',
    });
    expect(await s.fail('get_document', { id: 'ACME-2025-0001' })).toMatchObject({ code: 'invalid', reason: 'bad_uuid', details: { field: 'id' } });
  });
});
