import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { qualifyingEntriesSql } from '../src/core/billing/qualifying.ts';
import { pricedEntriesSql } from '../src/core/rates/resolve.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeProject, makeTicket, makeUser, makeWorkspace } from './helpers/factories.ts';
import { makeBillingWorld, type BillingWorld } from './billing-world.ts';

/**
 * What the allocation's entry query reads (issue 25): only the billed workspace's tickets (those
 * holding candidate entries, by its pk, or the workspace's), whatever the statistics say. Before, the planner could start from every
 * ticket of every workspace and compute each one's inherited billing policy (correlated
 * subqueries on its project and client): with 100,000 tickets elsewhere in the database a
 * 20,000-entry run spent 7-10 s of CPU per statement instead of a fraction of a second. Checked on
 * the executed plan (rows read from `tickets`), never on time.
 */

let app: TestApp;
let w: BillingWorld;

interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

/** Rows the executed plan read from `relation`, over all its scans and loops. */
function rowsRead(node: PlanNode, relation: string): number {
  const own = node['Relation Name'] === relation ? (node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 1) : 0;
  return own + (node.Plans ?? []).reduce((n, p) => n + rowsRead(p, relation), 0);
}

beforeAll(async () => {
  app = await startTestApp();
  w = await makeBillingWorld(app);
  const sql = app.db.sql;
  // another agency with many tickets, none of which the world's run may even look at
  const other = await makeWorkspace(sql);
  const owner = await makeUser(sql, other, { role: 'owner' });
  const project = await makeProject(sql, other, { key: 'BIG', members: [{ person: owner }] });
  for (let i = 0; i < 150; i++) await makeTicket(sql, other, { projectId: project.id, title: `Other ticket ${i}`, reporterId: owner.id });
  await sql`analyze tickets`;
  await sql`analyze time_entries`;
});
afterAll(() => app.close());

describe('the entries a run bills', () => {
  it('reads no ticket of another workspace, in the check, the dry run and the allocation', async () => {
    const sql = app.db.sql;
    const period = { id: w.october.id, periodStart: '2026-10-01', periodEnd: '2026-10-31' };
    const [{ n: own }] = await sql<[{ n: number }]>`select count(*)::int as n from tickets where workspace_id = ${w.ws.id}`;
    const [{ n: all }] = await sql<[{ n: number }]>`select count(*)::int as n from tickets`;
    expect(all).toBeGreaterThan(150);
    for (const query of [qualifyingEntriesSql(sql, w.ws.id, period), pricedEntriesSql(sql, w.ws.id, period)]) {
      const [row] = await sql<{ 'QUERY PLAN': { Plan: PlanNode }[] }[]>`explain (analyze, format json) select * from (${query}) q`;
      const plan = row!['QUERY PLAN'][0]!.Plan;
      expect(rowsRead(plan, 'tickets')).toBeLessThanOrEqual(own);
    }
    // and the rows are the ones the world bills
    const rows = await sql<{ entry_id: string }[]>`select entry_id from (${qualifyingEntriesSql(sql, w.ws.id, period)}) q`;
    expect(rows.map((r) => r.entry_id).sort()).toEqual([...w.billable].sort());
  });
});
