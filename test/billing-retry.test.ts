import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allocateRun } from '../src/core/billing/allocate.ts';
import { renderDocument } from '../src/core/documents/render-document.ts';
import { renderJob } from '../src/core/jobs/catalog.ts';
import type { JobCtx } from '../src/core/jobs/ctx.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { drainBillingJobs, jobCtx, makeBillingWorld, type BillingWorld } from './billing-world.ts';

/**
 * Kill and retry: each job aborted at every step (a checkpoint that throws, as a crash there
 * would: the open transaction rolls back) and then run again leaves exactly what a run that
 * never failed leaves: the same lines, timesheets and numbers, one document per (timesheet,
 * format), one queued job per (timesheet, format). Delivery's steps are in deliveries.test.ts.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const crashAt = (at: string) => (step: string) => {
  if (step === at) throw new Error(`crash at ${step}`);
};

async function startedRun(): Promise<{ w: BillingWorld; runId: string }> {
  const w = await makeBillingWorld(app);
  const res = await app.call('POST', `/api/w/${w.ws.slug}/billing/runs`, { session: w.session, body: { periodId: w.october.id } });
  expect(res.status).toBe(201);
  return { w, runId: res.body.id };
}

/** Everything allocation decides, in a comparable form. */
async function allocationState(w: BillingWorld, runId: string) {
  const sql = app.db.sql;
  return {
    status: (await sql`select status from billing_runs where id = ${runId}`)[0]!.status,
    lines: (await sql`select entry_id from billing_run_entries where run_id = ${runId} order by entry_id`).map((r) => r.entry_id),
    billed: (await sql`select count(*)::int as n from time_entries where billing_run_id = ${runId}`)[0]!.n,
    sheets: (await sql`select number, scope, version from timesheets where run_id = ${runId} order by number`).map(
      (r) => `${r.number}/${r.scope}/v${r.version}`,
    ),
    counters: (
      await sql`select c.code, d.year, d.last_number from document_counters d join clients c on c.id = d.client_id where c.workspace_id = ${w.ws.id} order by c.code`
    ).map((r) => `${r.code}:${r.year}:${r.last_number}`),
    jobs: (
      await sql`select j.key from graphile_worker._private_jobs j join timesheets s on j.key like 'documents:render:' || s.id || ':%' where s.run_id = ${runId} order by j.key`
    ).length,
  };
}

const ALLOCATE_STEPS = ['allocate:locked', 'allocate:entries', 'allocate:timesheets', 'allocate:enqueued'];

describe('billing:allocate', () => {
  it.each(ALLOCATE_STEPS)('aborted at %s and retried: the same lines, timesheets, numbers and jobs as a clean run', async (step) => {
    const clean = await startedRun();
    await allocateRun(jobCtx(app.db.sql), { runId: clean.runId });
    const expected = await allocationState(clean.w, clean.runId);

    const { w, runId } = await startedRun();
    await expect(allocateRun(jobCtx(app.db.sql, { checkpoint: crashAt(step) }), { runId })).rejects.toThrow(`crash at ${step}`);
    expect((await allocationState(w, runId)).lines).toEqual([]);
    await allocateRun(jobCtx(app.db.sql), { runId });
    await allocateRun(jobCtx(app.db.sql), { runId }); // a duplicate delivery of the job changes nothing
    const got = await allocationState(w, runId);
    expect({ ...got, lines: got.lines.length }).toEqual({ ...expected, lines: expected.lines.length });
    expect([...got.lines].sort()).toEqual([...w.billable].sort());
    expect(got).toMatchObject({ status: 'rendering', billed: w.billable.length, jobs: 6 });
  });
});

const RENDER_STEPS = ['render:loaded', 'render:rendered', 'render:written'];

describe('documents:render', () => {
  it.each(RENDER_STEPS)('aborted at %s on every document and retried: one document per timesheet and format, numbers unchanged', async (step) => {
    const { w, runId } = await startedRun();
    const ctx: JobCtx = jobCtx(app.db.sql);
    await allocateRun(ctx, { runId });
    const jobs = await app.db.sql<{ payload: unknown }[]>`
      select j.payload::jsonb as payload from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
      where t.identifier = 'documents:render' and j.payload->>'timesheetId' in (select id::text from timesheets where run_id = ${runId})`;
    for (const j of jobs)
      await expect(renderDocument(jobCtx(app.db.sql, { checkpoint: crashAt(step) }), renderJob.payload.parse(j.payload))).rejects.toThrow('crash');
    await drainBillingJobs(app.db.sql, ctx);
    for (const j of jobs) await renderDocument(ctx, renderJob.payload.parse(j.payload)); // duplicates of every job change nothing
    const docs = await app.db.sql<{ number: string; format: string; version: number; n: number }[]>`
      select number, format, version, count(*)::int as n from documents where run_id = ${runId} group by 1, 2, 3 order by 1, 2`;
    expect(docs.map((d) => `${d.number}.${d.format}:v${d.version}x${d.n}`)).toEqual([
      'ACME-2026-0001.csv:v1x1',
      'ACME-2026-0001.html:v1x1',
      'INI-2026-0001.csv:v1x1',
      'INI-2026-0001.html:v1x1',
      'INI-2026-0002.csv:v1x1',
      'INI-2026-0002.html:v1x1',
    ]);
    // every timesheet rendered: deliveries made once per recipient, and the run moved on
    const deliveries = await app.db.sql<{ email: string; n: number }[]>`
      select dd.email, count(*)::int as n from document_deliveries dd join timesheets s on s.id = dd.timesheet_id
      where s.run_id = ${runId} group by dd.email order by dd.email`;
    expect(deliveries).toEqual([
      { email: 'ap@acme.test', n: 1 },
      { email: 'buchhaltung@initech.test', n: 2 },
      { email: 'cfo@acme.test', n: 1 },
    ]);
    expect((await app.db.sql`select status from billing_runs where id = ${runId}`)[0]!.status).toBe('delivering');
    expect(w.billable.length).toBeGreaterThan(0);
  });
});
