import { afterAll, beforeAll, expect, it } from 'vitest';
import { allocateRun } from '../src/core/billing/allocate.ts';
import { renderDocument } from '../src/core/documents/render-document.ts';
import { renderJob } from '../src/core/jobs/catalog.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { jobCtx, makeBillingWorld } from './billing-world.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

/** Backends of this database waiting for a lock (the render held mid-statement, a void queued behind it). */
const lockWaiters = async () =>
  (
    await app.db.sql<{ n: number }[]>`
    select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`
  )[0]!.n;

/**
 * Issue 19, defect 3. A render whose insert had read the run as `rendering` before a void
 * committed wrote a live document into the voided run. The render is held mid-insert here by a
 * lock the test takes on the workspace row (the insert's foreign-key check waits for it, after the
 * statement read the run): without the run lock, the void commits meanwhile and misses the
 * document; with it, the void waits for the render and voids what it wrote.
 */
it('a void while a document is being written leaves no live document in the voided run', async () => {
  const w = await makeBillingWorld(app);
  const started = await app.call('POST', `/api/w/${w.ws.slug}/billing/runs`, { session: w.session, body: { periodId: w.october.id } });
  expect(started.status).toBe(201);
  const runId: string = started.body.id;
  await allocateRun(jobCtx(app.db.sql), { runId });
  const [job] = await app.db.sql<{ payload: unknown }[]>`
    select j.payload::jsonb as payload from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
    where t.identifier = 'documents:render' and j.payload->>'timesheetId' in (select id::text from timesheets where run_id = ${runId})
    order by j.id limit 1`;

  const holder = await app.db.sql.reserve();
  try {
    await holder`begin`;
    await holder`select 1 from workspaces where id = ${w.ws.id} for update`;
    const render = renderDocument(jobCtx(app.db.sql), renderJob.payload.parse(job!.payload));
    await expect.poll(lockWaiters, { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
    let voided = false;
    const voiding = app
      .call('POST', `/api/w/${w.ws.slug}/billing/runs/${runId}/void`, { session: w.session, body: { reason: 'Wrong rates' } })
      .finally(() => (voided = true));
    // the void either finishes (nothing made it wait: the bug) or queues behind the render's run lock
    await expect.poll(async () => voided || (await lockWaiters()) >= 2, { timeout: 20_000 }).toBe(true);
    await holder`commit`;
    await render;
    expect((await voiding).status).toBe(200);
  } finally {
    holder.release();
  }

  const docs = await app.db.sql<{ voided: boolean }[]>`select voided from documents where run_id = ${runId}`;
  expect(docs.length).toBeGreaterThan(0);
  expect(docs.filter((d) => !d.voided)).toEqual([]);
}, 60_000);
