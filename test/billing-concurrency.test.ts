import { afterAll, beforeAll, expect, it } from 'vitest';
import { allocateRun } from '../src/core/billing/allocate.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { jobCtx, makeBillingWorld } from './billing-world.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

/** Each billable entry of the world: in how many live runs, and the run its row names. */
const billing = (ids: string[]) =>
  app.db.sql<{ id: string; live: number; run: string | null }[]>`
    select e.id, (select count(*)::int from billing_run_entries l where l.entry_id = e.id and l.active) as live, e.billing_run_id as run
    from time_entries e where e.id = any(${ids}::uuid[])`;

it('two POST /billing/runs for the same period at once: one run, every entry billed exactly once', async () => {
  const w = await makeBillingWorld(app);
  const body = { periodId: w.october.id };
  const path = `/api/w/${w.ws.slug}/billing/runs`;
  const answers = await Promise.all([0, 1].map(() => app.call('POST', path, { session: w.session, body })));
  expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
  expect(answers.find((a) => a.status === 409)!.body.error.details.reason).toBe('run_in_progress');
  const runId = answers.find((a) => a.status === 201)!.body.id;
  await allocateRun(jobCtx(app.db.sql), { runId });
  for (const e of await billing(w.billable)) expect(e).toEqual({ id: e.id, live: 1, run: runId });
});

it('two allocations racing for the same entries (runs made past the API’s check): each entry in exactly one live run', async () => {
  const w = await makeBillingWorld(app);
  const runs = await app.db.sql<{ id: string }[]>`
    insert into billing_runs (workspace_id, period_id, status) values (${w.ws.id}, ${w.october.id}, 'allocating'), (${w.ws.id}, ${w.october.id}, 'allocating')
    returning id`;
  // Both must succeed: without the billing lock the loser would hit the live-entry unique index (an error, not a second billing).
  await Promise.all(runs.map((r) => allocateRun(jobCtx(app.db.sql), { runId: r.id })));
  const rows = await billing(w.billable);
  for (const e of rows) expect(e.live).toBe(1);
  const statuses = await app.db.sql<{ status: string; error: string | null }[]>`
    select status, error from billing_runs where id = any(${runs.map((r) => r.id)}::uuid[]) order by status`;
  expect(statuses.map((s) => s.status)).toEqual(['failed', 'rendering']);
  expect(statuses[0]!.error).toMatch(/^nothing_to_bill/);
  const winner = (await app.db.sql<{ id: string }[]>`select id from billing_runs where id = any(${runs.map((r) => r.id)}::uuid[]) and status = 'rendering'`)[0]!
    .id;
  expect(new Set(rows.map((r) => r.run))).toEqual(new Set([winner]));
});
