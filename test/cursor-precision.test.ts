import { afterAll, beforeAll, expect, it } from 'vitest';
import { operatorPrincipal } from '../src/core/auth/operator.ts';
import { listRuns } from '../src/core/billing/list.ts';
import { makeCtx, type Ctx } from '../src/core/ctx.ts';
import { listDownloadableDocuments } from '../src/core/documents/resources.ts';
import { runOp } from '../src/core/operation.ts';
import { listTickets } from '../src/core/tickets/list.ts';
import { testDb, type TestDb } from './helpers/db.ts';
import { makeBillingRun, makeClient, makeDocument, makePeriod, makeProject, makeTicket, makeUser, makeWorkspace, type Workspace } from './helpers/factories.ts';

/**
 * Keyset cursors keep microseconds. postgres.js serialises a parameter PostgreSQL types as a
 * timestamp through a JavaScript Date, which keeps milliseconds only: a cursor cast straight to a
 * timestamp lost rows that followed the page's last one within the same millisecond. Cursors now
 * go through text. Each list here is paged one row at a time over rows a microsecond apart.
 */
let db: TestDb;
let ws: Workspace;
let ctx: Ctx;
beforeAll(async () => {
  db = await testDb();
  ws = await makeWorkspace(db.sql);
  await makeUser(db.sql, ws, { role: 'owner' });
  ctx = makeCtx({ sql: db.sql }, await operatorPrincipal(db.sql, ws.slug));
});
afterAll(() => db.close());

async function everyPage<T>(page: (cursor: string | undefined) => Promise<{ items: T[]; next: string | null }>): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 20; i++) {
    const p = await page(cursor);
    all.push(...p.items);
    if (!p.next) return all;
    cursor = p.next;
  }
  throw new Error('more pages than rows');
}

it('GET /tickets', async () => {
  const project = await makeProject(db.sql, ws, {});
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) ids.push((await makeTicket(db.sql, ws, { projectId: project.id, title: `T${i}` })).id);
  await db.sql`update tickets set updated_at = '2026-05-05T10:00:00.123000Z'::timestamptz + (array_position(${ids}::uuid[], id) * interval '1 microsecond') where id = any(${ids}::uuid[])`;
  const seen = await everyPage(async (cursor) => {
    const r = await runOp(listTickets, ctx, { projectId: project.id, limit: '1', ...(cursor ? { cursor } : {}) });
    return { items: r.items.map((t) => t.title), next: r.nextCursor };
  });
  expect(seen).toEqual(['T3', 'T2', 'T1', 'T0']);
});

it('MCP resources/list (documents)', async () => {
  const client = await makeClient(db.sql, ws);
  const period = await makePeriod(db.sql, ws, { start: '2025-02-01', end: '2025-02-28', closed: true });
  const run = await makeBillingRun(db.sql, ws, { periodId: period.id });
  for (let i = 0; i < 4; i++) await makeDocument(db.sql, ws, { runId: run.id, clientId: client.id, number: `US-${i}`, version: i + 1 });
  await db.sql`update documents set created_at = '2026-05-05T10:00:00.123000Z'::timestamptz + (substr(number, 4)::int * interval '1 microsecond') where number like 'US-%'`;
  const seen = await everyPage(async (cursor) => {
    const r = await runOp(listDownloadableDocuments, ctx, { limit: 1, ...(cursor ? { cursor } : {}) });
    return { items: r.documents.map((d) => d.number), next: r.nextCursor };
  });
  expect(seen).toEqual(['US-3', 'US-2', 'US-1', 'US-0']);
});

it('GET /billing/runs', async () => {
  const period = await makePeriod(db.sql, ws, { start: '2025-03-01', end: '2025-03-31', closed: true });
  const runs: string[] = [];
  for (let i = 0; i < 4; i++) runs.push((await makeBillingRun(db.sql, ws, { periodId: period.id })).id);
  await db.sql`update billing_runs set created_at = '2026-05-05T10:00:00.123000Z'::timestamptz + (array_position(${runs}::uuid[], id) * interval '1 microsecond') where id = any(${runs}::uuid[])`;
  const seen = await everyPage(async (cursor) => {
    const r = await runOp(listRuns, ctx, { limit: '1', ...(cursor ? { cursor } : {}) });
    return { items: r.items.map((x) => x.id), next: r.nextCursor };
  });
  expect(seen.filter((id) => runs.includes(id))).toEqual([...runs].reverse());
});
