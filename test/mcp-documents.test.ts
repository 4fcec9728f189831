import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeBillingRun, makeClient, makeDocument, makePeriod, makeProject, makeToken, makeUser, makeWorkspace, type Workspace } from './helpers/factories.ts';
import { mcpSession, type McpSession } from './helpers/mcp.ts';

let app: TestApp;
let ws: Workspace;
let acme: { id: string; code: string };
let run: { id: string };
let s: McpSession;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  acme = await makeClient(sql, ws, { name: 'Acme' });
  const globex = await makeClient(sql, ws, { name: 'Globex' });
  const shop = await makeProject(sql, ws, { billingClientId: acme.id });
  const period = await makePeriod(sql, ws, { start: '2025-01-01', end: '2025-01-31', closed: true });
  run = await makeBillingRun(sql, ws, { periodId: period.id });
  await makeDocument(sql, ws, { runId: run.id, clientId: acme.id, number: 'ACME-2025-0001', deliveries: [{ email: 'ap@acme.test', state: 'sent' }] });
  await makeDocument(sql, ws, { runId: run.id, clientId: acme.id, projectId: shop.id, number: 'ACME-2025-0002', format: 'csv' });
  await makeDocument(sql, ws, { runId: run.id, clientId: globex.id, number: 'GLOBEX-2025-0001', voided: true });
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
