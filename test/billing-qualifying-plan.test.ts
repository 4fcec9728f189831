import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { qualifyingEntriesSql } from '../src/core/billing/qualifying.ts';
import { pricedEntriesSql } from '../src/core/rates/resolve.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeCategory, makeProject, makeTicket, makeTimeEntry, makeUser, makeWorkspace } from './helpers/factories.ts';
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
  Alias?: string;
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

  it('looks a rate up once per (category, client, project, day), not once per entry', async () => {
    const sql = app.db.sql;
    const period = { id: w.october.id, periodStart: '2026-10-01', periodEnd: '2026-10-31' };
    const dev = await makeCategory(sql, w.ws, 'Plan developer');
    await sql`insert into rates (workspace_id, category_id, currency, hourly_minor, effective_from) values (${w.ws.id}, ${dev.id}, 'EUR', 10000, '2026-01-01')`;
    // two more entries on the day and ticket of a billable one: three entries share its key
    const [first] = await sql<{ ticket_id: string; user_id: string; spent_on: string }[]>`
      select ticket_id, user_id, spent_on::text from time_entries where id = ${w.billable[0]!}`;
    const extra = [];
    for (const minutes of [15, 30])
      extra.push((await makeTimeEntry(sql, w.ws, { ticketId: first!.ticket_id, userId: first!.user_id, spentOn: first!.spent_on, minutes })).id);
    await sql`update time_entries set category_id = ${dev.id} where id = any(${[...w.billable, ...extra]}::uuid[])`;
    try {
      const priced = pricedEntriesSql(sql, w.ws.id, period);
      const [{ entries, keys, rated }] = await sql<[{ entries: number; keys: number; rated: number }]>`
        select count(*)::int as entries, count(distinct (q.category_id, q.client_id, q.project_id, q.spent_on))::int as keys,
               count(q.rate_minor)::int as rated
        from (${priced}) q`;
      expect(entries).toBeGreaterThan(keys);
      expect(rated).toBe(entries); // every entry has the rate of its key, not only the one it was looked up for
      const [row] = await sql<{ 'QUERY PLAN': { Plan: PlanNode }[] }[]>`explain (analyze, format json) select * from (${priced}) q`;
      // the look-up's scans of rates (`r`; the workspace's "has any rate" checks aside)
      expect(loopsOf(row!['QUERY PLAN'][0]!.Plan, 'r')).toBe(keys);
    } finally {
      await sql`delete from time_entries where id = any(${extra}::uuid[])`;
      await sql`update time_entries set category_id = null where id = any(${w.billable}::uuid[])`;
      await sql`delete from rates where workspace_id = ${w.ws.id}`;
    }
  });
});

/** How many times the executed plan scanned the relation named `alias` (its scans' loops). */
function loopsOf(node: PlanNode, alias: string): number {
  const own = node.Alias === alias ? (node['Actual Loops'] ?? 1) : 0;
  return own + (node.Plans ?? []).reduce((n, p) => n + loopsOf(p, alias), 0);
}
