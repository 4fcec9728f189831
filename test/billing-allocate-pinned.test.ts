import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeBank, makeCategory, makePeriod, makeTimeEntry } from './helpers/factories.ts';
import { drainBillingJobs, jobCtx, makeBillingWorld, type BillingWorld } from './billing-world.ts';

/**
 * The money an allocation stores, pinned line by line and client by client on a mixed data set
 * (issue 25): the allocation's statements were rewritten for speed, and must bill exactly what the
 * code before that rewrite billed. The expected figures below are that code's answer, recorded
 * on it, never recomputed from the rules here.
 * The data: the billing world (paid, free, bank and on-close tickets, two clients) plus rates
 * changing in the middle of the period, two currencies, client and project overrides, a second
 * category, an entry from an earlier period of an on-close ticket, a correction, minutes that
 * round half away from zero, a bank of another client (billed as paid) and an unrated entry
 * billed at zero.
 */

let app: TestApp;
let w: BillingWorld;
/** Entry id → a stable label, so the pinned rows read without ids. */
const labels = new Map<string, string>();
const path = (p: string) => `/api/w/${w.ws.slug}${p}`;
const call = (method: string, p: string, body?: unknown) => app.call(method, path(p), { session: w.session, body });

beforeAll(async () => {
  app = await startTestApp();
  w = await makeBillingWorld(app);
  const sql = app.db.sql;
  const dev = await makeCategory(sql, w.ws, 'Developer');
  const design = await makeCategory(sql, w.ws, 'Designer');
  await makePeriod(sql, w.ws, { start: '2026-09-01', end: '2026-09-30', closed: true });
  const paid = w.billable[0]!;
  const api1 = w.billable[6]!;
  w.billable.forEach((id, i) => labels.set(id, `world-${i}`));
  // every world entry a developer's but the first API one (no category: unrated, billed at zero)
  await sql`update time_entries set category_id = ${dev.id} where workspace_id = ${w.ws.id} and id <> ${api1}`;
  const extra = async (label: string, o: Parameters<typeof makeTimeEntry>[2]) => {
    const { id } = await makeTimeEntry(sql, w.ws, o);
    labels.set(id, label);
  };
  const member = w.member.id;
  await extra('design-web-16th', { ticketId: w.tickets.paid.id, userId: member, spentOn: '2026-10-16', minutes: 7, categoryId: design.id });
  await extra('correction-of-world-0', {
    ticketId: w.tickets.paid.id,
    userId: member,
    spentOn: '2026-10-20',
    minutes: -30,
    categoryId: dev.id,
    correctsEntryId: paid,
  });
  await extra('on-close-september', { ticketId: w.tickets.closedOnClose.id, userId: member, spentOn: '2026-09-20', minutes: 45, categoryId: dev.id });
  await extra('design-app-odd', { ticketId: w.tickets.closedOnClose.id, userId: member, spentOn: '2026-10-25', minutes: 13, categoryId: design.id });
  await extra('api-design-1st', { ticketId: w.tickets.api.id, userId: member, spentOn: '2026-10-01', minutes: 25, categoryId: design.id });
  await extra('api-dev-15th', { ticketId: w.tickets.api.id, userId: member, spentOn: '2026-10-15', minutes: 50, categoryId: dev.id });
  await extra('banked-15th', { ticketId: w.tickets.banked.id, userId: member, spentOn: '2026-10-15', minutes: 35, categoryId: design.id });
  // Initech's entry on Acme's banked ticket: someone else's bank, so billed as paid
  await extra('banked-by-initech', {
    ticketId: w.tickets.banked.id,
    userId: member,
    spentOn: '2026-10-12',
    minutes: 20,
    categoryId: dev.id,
    billingClientId: w.initech.id,
  });
  expect((await call('PATCH', `/clients/${w.initech.id}`, { currency: 'USD' })).status).toBe(200);
  const [apiProject] = await sql<{ id: string }[]>`select project_id as id from tickets where id = ${w.tickets.api.id}`;
  // a second bank for Acme, on nothing, so the draw-down's bank is the one that matters
  await makeBank(sql, w.ws, { clientId: w.acme.id, name: 'Unused', deposits: [60] });
  const rates = [
    { categoryId: dev.id, currency: 'EUR', hourlyRateMinor: 10000, effectiveFrom: '2026-01-01' },
    { categoryId: dev.id, currency: 'EUR', hourlyRateMinor: 12000, effectiveFrom: '2026-10-15' },
    { categoryId: design.id, currency: 'EUR', hourlyRateMinor: 8333, effectiveFrom: '2026-01-01' },
    { categoryId: dev.id, currency: 'USD', hourlyRateMinor: 9000, effectiveFrom: '2026-01-01' },
    { categoryId: dev.id, clientId: w.initech.id, currency: 'USD', hourlyRateMinor: 9999, effectiveFrom: '2026-10-15' },
    { categoryId: design.id, currency: 'USD', hourlyRateMinor: 7777, effectiveFrom: '2026-01-01' },
    { categoryId: design.id, projectId: apiProject!.id, currency: 'USD', hourlyRateMinor: 11111, effectiveFrom: '2026-10-01' },
    // another currency's rate for Initech's category: never used (Initech bills in USD)
    { categoryId: dev.id, clientId: w.initech.id, currency: 'EUR', hourlyRateMinor: 1, effectiveFrom: '2026-01-01' },
  ];
  expect((await call('PUT', '/rates', { rates })).status).toBe(200);
});
afterAll(() => app.close());

describe('allocation money, pinned to the answer of the code before issue 25', () => {
  it('stores the same policy, bank, currency, rate and amounts on every line, and the same sums per client', async () => {
    const sql = app.db.sql;
    const res = await call('POST', '/billing/runs', { periodId: w.october.id, billUnratedAtZero: true });
    expect(res.status).toBe(201);
    await drainBillingJobs(sql, jobCtx(sql));
    const lines = await sql<
      {
        entryId: string;
        client: string;
        policy: string;
        bank: string | null;
        currency: string;
        rate: number | null;
        list: number;
        amount: number;
        minutes: number;
      }[]
    >`
      select l.entry_id as "entryId", c.code as client, l.policy, b.name as bank, l.currency, l.rate_minor as rate,
             l.list_amount_minor as list, l.amount_minor as amount, l.minutes
      from billing_run_entries l join clients c on c.id = l.client_id left join banks b on b.id = l.bank_id
      where l.run_id = ${res.body.id}`;
    const pinned = lines
      .map(({ entryId, ...l }) => [labels.get(entryId) ?? entryId, l.client, l.minutes, l.policy, l.bank, l.currency, l.rate, l.list, l.amount])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    expect(pinned).toEqual(PINNED_LINES);
    const perClient = await sql<{ client: string; currency: string; amount: number; list: number; n: number }[]>`
      select c.code as client, l.currency, sum(l.amount_minor)::int as amount, sum(l.list_amount_minor)::int as list, count(*)::int as n
      from billing_run_entries l join clients c on c.id = l.client_id where l.run_id = ${res.body.id}
      group by c.code, l.currency order by c.code`;
    expect(perClient).toEqual(PINNED_CLIENTS);
  });
});

// [entry, client, minutes, policy, bank, currency, rate/h, list amount, charged amount], recorded on 0e86f1c
const PINNED_LINES: unknown[] = [
  ['api-design-1st', 'INI', 25, 'paid', null, 'USD', 11111, 4630, 4630],
  ['api-dev-15th', 'INI', 50, 'paid', null, 'USD', 9999, 8333, 8333],
  ['banked-15th', 'ACME', 35, 'bank', 'Prepaid', 'EUR', 8333, 4861, 0],
  ['banked-by-initech', 'INI', 20, 'paid', null, 'USD', 9000, 3000, 3000],
  ['correction-of-world-0', 'ACME', -30, 'paid', null, 'EUR', 12000, -6000, -6000],
  ['design-app-odd', 'INI', 13, 'paid', null, 'USD', 7777, 1685, 1685],
  ['design-web-16th', 'ACME', 7, 'paid', null, 'EUR', 8333, 972, 972],
  ['on-close-september', 'INI', 45, 'paid', null, 'USD', 9000, 6750, 6750],
  ['world-0', 'ACME', 90, 'paid', null, 'EUR', 10000, 15000, 15000],
  ['world-1', 'ACME', 30, 'paid', null, 'EUR', 10000, 5000, 5000],
  ['world-2', 'ACME', 45, 'free', null, 'EUR', 10000, 7500, 0],
  ['world-3', 'ACME', 120, 'bank', 'Prepaid', 'EUR', 10000, 20000, 0],
  ['world-4', 'INI', 60, 'paid', null, 'USD', 9000, 9000, 9000],
  ['world-5', 'INI', 90, 'paid', null, 'USD', 9999, 14999, 14999],
  ['world-6', 'INI', 90, 'paid', null, 'USD', null, 0, 0],
];
const PINNED_CLIENTS: unknown[] = [
  { client: 'ACME', currency: 'EUR', amount: 14972, list: 47333, n: 7 },
  { client: 'INI', currency: 'USD', amount: 48397, list: 48397, n: 8 },
];
