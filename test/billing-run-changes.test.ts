import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allocateRun } from '../src/core/billing/allocate.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeCategory, makeTimeEntry } from './helpers/factories.ts';
import { jobCtx, makeBillingWorld, type BillingWorld } from './billing-world.ts';

/**
 * Money on run responses and the dry run's "what changed since the last run of the period"
 * (issue 23): BillingRun.clients carries each client's currency and amounts once the run is
 * priced; a dry run compares what it would bill with the period's latest run that billed lines.
 */

let app: TestApp;
let w: BillingWorld;
let dev: { id: string };
const path = (p: string) => `/api/w/${w.ws.slug}${p}`;
const call = (method: string, p: string, body?: unknown) => app.call(method, path(p), { session: w.session, body });
const dryRun = async () => {
  const res = await call('POST', '/billing/runs', { periodId: w.october.id, dryRun: true });
  expect(res.status).toBe(200);
  return res.body;
};
const rates = (acmeHourly: number) => [
  { categoryId: dev.id, currency: 'EUR', hourlyRateMinor: acmeHourly, effectiveFrom: '2026-01-01' },
  { categoryId: dev.id, currency: 'USD', hourlyRateMinor: 9000, effectiveFrom: '2026-01-01' },
];

beforeAll(async () => {
  app = await startTestApp();
  w = await makeBillingWorld(app);
  dev = await makeCategory(app.db.sql, w.ws, 'Developer');
  await app.db.sql`update time_entries set category_id = ${dev.id} where workspace_id = ${w.ws.id}`;
  expect((await call('PATCH', `/clients/${w.initech.id}`, { currency: 'USD' })).status).toBe(200);
});
afterAll(() => app.close());

describe('an hours-only run', () => {
  it('has no money keys on its clients, and a dry run before any run compares with nothing (changes null)', async () => {
    expect((await dryRun()).changes).toBeNull();
    const res = await call('POST', '/billing/runs', { periodId: w.october.id });
    expect(res.status).toBe(201);
    await allocateRun(jobCtx(app.db.sql), { runId: res.body.id });
    const run = await call('GET', `/billing/runs/${res.body.id}`);
    expect(run.body.clients.length).toBe(2);
    for (const c of run.body.clients) expect(Object.keys(c)).not.toContain('currency');
    // compared with an hours-only run: counts and minutes, no amounts
    await call('POST', `/billing/runs/${res.body.id}/void`, { reason: 'priced next' });
    await app.db.sql`update time_entries set minutes = 100 where id = ${w.billable[0]!}`;
    const changes = (await dryRun()).changes;
    expect(changes.since).toEqual({ runId: res.body.id, status: 'voided', createdAt: expect.any(String) });
    expect(changes.clients).toEqual([
      {
        clientId: w.acme.id,
        clientName: 'Acme Corp',
        currency: null,
        added: { entryCount: 0, minutes: 0, amountMinor: null },
        removed: { entryCount: 0, minutes: 0, amountMinor: null },
        changed: { entryCount: 1, minutes: 10, amountMinor: null },
      },
    ]);
    await app.db.sql`update time_entries set minutes = 90 where id = ${w.billable[0]!}`;
  });
});

describe('a priced run', () => {
  let runId: string;

  it('carries each client’s currency, charged and list amounts on GET /billing/runs/{id} and the list', async () => {
    expect((await call('PUT', '/rates', { rates: rates(10000) })).status).toBe(200);
    const res = await call('POST', '/billing/runs', { periodId: w.october.id });
    expect(res.status).toBe(201);
    runId = res.body.id;
    await allocateRun(jobCtx(app.db.sql), { runId });
    const run = await call('GET', `/billing/runs/${runId}`);
    const byClient = Object.fromEntries(run.body.clients.map((c: any) => [c.clientId, c]));
    // Acme: 90 + 30 paid minutes at 100.00 = 200.00; free 45 and bank 120 minutes would cost 75.00 and 200.00
    expect(byClient[w.acme.id]).toMatchObject({ currency: 'EUR', amountMinor: 20000, listAmountMinor: 47500, billableMinutes: 120 });
    // Initech: 60 + 90 + 90 paid minutes at 90.00
    expect(byClient[w.initech.id]).toMatchObject({ currency: 'USD', amountMinor: 36000, listAmountMinor: 36000 });
    const list = await call('GET', '/billing/runs');
    expect(list.body.items.find((r: any) => r.id === runId).clients).toEqual(run.body.clients);
  });

  it('a dry run after it shows a late entry as added and a correction of its line as changed (its lines still stand)', async () => {
    const sql = app.db.sql;
    await makeTimeEntry(sql, w.ws, { ticketId: w.tickets.paid.id, userId: w.member.id, spentOn: '2026-10-20', minutes: 60, categoryId: dev.id });
    await makeTimeEntry(sql, w.ws, {
      ticketId: w.tickets.paid.id,
      userId: w.member.id,
      spentOn: '2026-10-02',
      minutes: -30,
      categoryId: dev.id,
      correctsEntryId: w.billable[0]!,
    });
    const preview = await dryRun();
    expect(preview.changes.since).toMatchObject({ runId });
    expect(preview.changes.clients).toEqual([
      {
        clientId: w.acme.id,
        clientName: 'Acme Corp',
        currency: 'EUR',
        added: { entryCount: 1, minutes: 60, amountMinor: 10000 },
        removed: { entryCount: 0, minutes: 0, amountMinor: 0 },
        changed: { entryCount: 1, minutes: -30, amountMinor: -5000 },
      },
    ]);
  });

  it('after a void, compares line by line: a rate change, an entry no longer billable, the late entry and the correction', async () => {
    const sql = app.db.sql;
    expect((await call('POST', `/billing/runs/${runId}/void`, { reason: 'rates went up' })).status).toBe(200);
    expect((await call('PUT', '/rates', { rates: rates(12000) })).status).toBe(200);
    await sql`update time_entries set billable = false where id = ${w.billable[1]!}`;
    const changes = (await dryRun()).changes;
    expect(changes.since).toEqual({ runId, status: 'voided', createdAt: expect.any(String) });
    // Initech's lines are billed again as they were: no row for it
    expect(changes.clients).toEqual([
      {
        clientId: w.acme.id,
        clientName: 'Acme Corp',
        currency: 'EUR',
        // the late 60 minutes at 120.00
        added: { entryCount: 1, minutes: 60, amountMinor: 12000 },
        // the 30 minutes made non-billable, as that run charged them (50.00)
        removed: { entryCount: 1, minutes: 30, amountMinor: 5000 },
        // 90 minutes now at 120.00 (+30.00), free and bank lines at a new rate (charged 0 both times), the correction of -30 minutes (-60.00)
        changed: { entryCount: 4, minutes: -30, amountMinor: 3000 - 6000 },
      },
    ]);
  });
});
