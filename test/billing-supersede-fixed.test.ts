import { afterAll, beforeAll, expect, it } from 'vitest';
import { supersedeQuotingTimesheets } from '../src/core/documents/supersede.ts';
import { loadTimesheet } from '../src/core/documents/load-timesheet.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { drainBillingJobs, jobCtx, makeBillingWorld, type BillingWorld } from './billing-world.ts';

/**
 * A redaction's new version of a timesheet keeps what allocation fixed on the sheet (issue 23):
 * tax, terms and due date, whether it is held for review (so a redaction never releases a draft
 * to the client's users) and the voided number it replaces. Found while adding the last two: the
 * new version was inserted with none of them, so it lost its tax line and due date.
 */
let app: TestApp;
let w: BillingWorld;

beforeAll(async () => {
  app = await startTestApp();
  w = await makeBillingWorld(app, { delivery: 'review' });
});
afterAll(() => app.close());

it('a redaction’s new version keeps the tax, due date, review and replaced number of the version it supersedes', async () => {
  const sql = app.db.sql;
  await sql`update clients set tax_rate_bp = 1900, tax_label = 'VAT 19 %', tax_note = 'Net 30', payment_terms_days = 30 where id = ${w.acme.id}`;
  const started = await app.call('POST', `/api/w/${w.ws.slug}/billing/runs`, { session: w.session, body: { periodId: w.october.id } });
  expect(started.status).toBe(201);
  await drainBillingJobs(sql, jobCtx(sql));
  await sql`update timesheets set replaces_number = 'ACME-2025-0009' where run_id = ${started.body.id} and client_id = ${w.acme.id}`;

  expect(await supersedeQuotingTimesheets(sql, w.tickets.paid.id)).toBe(1);
  const sheets = await sql<{ id: string; version: number }[]>`
    select id, version from timesheets where run_id = ${started.body.id} and client_id = ${w.acme.id} order by version`;
  expect(sheets.map((s) => s.version)).toEqual([1, 2]);
  const fixed = (id: string) => sql`
    select tax_rate_bp, tax_label, tax_note, due_on::text, review, replaces_number from timesheets where id = ${id}`;
  const [first] = await fixed(sheets[0]!.id);
  expect(first).toMatchObject({ tax_rate_bp: 1900, review: true, replaces_number: 'ACME-2025-0009' });
  expect(first!.due_on).not.toBeNull();
  expect((await fixed(sheets[1]!.id))[0]).toEqual(first);
  const model = (await loadTimesheet(sql, sheets[1]!.id))!;
  expect(model).toMatchObject({ tax: { rateBasisPoints: 1900, label: 'VAT 19 %', note: 'Net 30' }, dueOn: first!.due_on, replacesNumber: 'ACME-2025-0009' });
});
