import { afterAll, beforeAll, expect, it } from 'vitest';
import { advanceRun } from '../src/core/billing/advance.ts';
import type { Db } from '../src/db/connect.ts';
import { testDb, type TestDb } from './helpers/db.ts';
import { makeBillingRun, makeClient, makeDocument, makePeriod, makeWorkspace } from './helpers/factories.ts';

/**
 * Two deliveries of one run reaching their final state at the same moment: the second transaction
 * waits for the first's lock on the run and must then see the first's delivery as done, or the run
 * stays `delivering` for ever (what the end-to-end test hit under load before the lock was taken in
 * its own statement).
 */
let db: TestDb;
beforeAll(async () => {
  db = await testDb();
});
afterAll(() => db.close());

it('the last of two deliveries finishing together completes the run', async () => {
  const sql = db.sql;
  const ws = await makeWorkspace(sql);
  const client = await makeClient(sql, ws);
  const period = await makePeriod(sql, ws, { start: '2026-10-01', end: '2026-10-31', closed: true });
  const run = await makeBillingRun(sql, ws, { periodId: period.id, status: 'delivering' });
  await makeDocument(sql, ws, { runId: run.id, clientId: client.id, number: 'RACE-1', deliveries: [{ email: 'a@x.test' }, { email: 'b@x.test' }] });
  const [a, b] = await sql<{ id: string }[]>`
    select dd.id from document_deliveries dd join timesheets s on s.id = dd.timesheet_id where s.run_id = ${run.id} order by dd.email`;

  const first = await sql.reserve();
  const second = await sql.reserve();
  try {
    await first`begin`;
    await second`begin`;
    await first`update document_deliveries set state = 'sent' where id = ${a!.id}`;
    await advanceRun(first as unknown as Db, run.id, new Date());
    await second`update document_deliveries set state = 'sent' where id = ${b!.id}`;
    const waiting = advanceRun(second as unknown as Db, run.id, new Date()); // blocks on the run's lock
    await new Promise((r) => setTimeout(r, 200));
    await first`commit`;
    await waiting;
    await second`commit`;
  } finally {
    first.release();
    second.release();
  }
  const [after] = await sql<{ status: string }[]>`select status from billing_runs where id = ${run.id}`;
  expect(after!.status).toBe('completed');
});
