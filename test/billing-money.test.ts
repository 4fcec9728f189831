import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allocateRun } from '../src/core/billing/allocate.ts';
import { lineAmountMinor } from '../src/core/rates/money.ts';
import { totalsOf } from '../src/core/documents/load-timesheet.ts';
import { renderCsv } from '../src/core/documents/render/csv.ts';
import { formatterFor } from '../src/core/documents/render/format.ts';
import { renderHtml } from '../src/core/documents/render/html.ts';
import { labelsFor } from '../src/core/documents/render/labels.ts';
import type { LinePolicy, TimesheetLine, TimesheetModel } from '../src/core/documents/timesheet-model.ts';
import { login, startTestApp, type TestApp } from './helpers/app.ts';
import { makeCategory } from './helpers/factories.ts';
import { drainBillingJobs, jobCtx, makeBillingWorld, type BillingWorld } from './billing-world.ts';

/**
 * Money on billing runs (issue 23): the rate in effect on each entry's date (project > client >
 * workspace default, in the client's currency) is resolved at allocation and stored on the run's
 * line; unrated paid time is a dry-run warning and refuses the run unless billed at zero.
 */

let app: TestApp;
let w: BillingWorld;
let dev: { id: string };
const path = (p: string) => `/api/w/${w.ws.slug}${p}`;
const call = (method: string, p: string, body?: unknown, session = w.session) => app.call(method, path(p), { session, body });
const reasonOf = (res: { body: any }) => res.body?.error?.details?.reason;

const RATES = () => [
  // Acme bills in EUR: the default rate changes in the middle of October
  { categoryId: dev.id, currency: 'EUR', hourlyRateMinor: 10000, effectiveFrom: '2026-01-01' },
  { categoryId: dev.id, currency: 'EUR', hourlyRateMinor: 12000, effectiveFrom: '2026-10-15' },
  // Initech bills in USD: a default, and its own rate from the 15th
  { categoryId: dev.id, currency: 'USD', hourlyRateMinor: 9000, effectiveFrom: '2026-01-01' },
  { categoryId: dev.id, clientId: w.initech.id, currency: 'USD', hourlyRateMinor: 9999, effectiveFrom: '2026-10-15' },
  // a rate of the future applies to nothing yet
  { categoryId: dev.id, currency: 'EUR', hourlyRateMinor: 1, effectiveFrom: '2027-01-01' },
];

beforeAll(async () => {
  app = await startTestApp();
  w = await makeBillingWorld(app);
  const sql = app.db.sql;
  dev = await makeCategory(sql, w.ws, 'Developer');
  // every billable entry is a developer's, except the API ticket's (no category: no rate)
  await sql`update time_entries set category_id = ${dev.id} where workspace_id = ${w.ws.id} and ticket_id <> ${w.tickets.api.id}`;
  expect((await call('PATCH', `/clients/${w.initech.id}`, { currency: 'USD' })).status).toBe(200);
});
afterAll(() => app.close());

describe('a workspace without rates', () => {
  it('previews no money and no warnings (hours only, as before issue 23)', async () => {
    const preview = await call('POST', '/billing/runs', { periodId: w.october.id, dryRun: true });
    expect(preview.status).toBe(200);
    expect([preview.body.money, preview.body.warnings]).toEqual([[], []]);
  });
});

describe('runs with rates', () => {
  it('warns in the dry run about unrated entries and their money per client and currency', async () => {
    expect((await call('PUT', '/rates', { rates: RATES() })).status).toBe(200);
    const res = await call('POST', '/billing/runs', { periodId: w.october.id, dryRun: true });
    expect(res.status).toBe(200);
    const apiEntry = w.billable[6]!;
    expect(res.body.warnings).toEqual([
      {
        reason: 'missing_rate',
        entryId: apiEntry,
        clientId: w.initech.id,
        projectId: expect.any(String),
        categoryId: null,
        spentOn: '2026-10-31',
        policy: 'paid',
      },
    ]);
    const byClient = Object.fromEntries(res.body.money.map((m: any) => [m.clientId, m]));
    // Acme: 90 + 30 paid minutes at 100.00 = 200.00; free 45 and bank 120 minutes cost 75.00 and 200.00 but are not charged
    expect(byClient[w.acme.id]).toEqual({ clientId: w.acme.id, currency: 'EUR', amountMinor: 20000, listAmountMinor: 47500 });
    // Initech: 60 minutes at 90.00 (7 Oct) + 90 minutes at 99.99 (31 Oct, 149.985 rounds to 149.99) + the unrated line at 0
    expect(byClient[w.initech.id]).toEqual({ clientId: w.initech.id, currency: 'USD', amountMinor: 9000 + 14999, listAmountMinor: 9000 + 14999 });
  });

  it('refuses the run while a paid entry has no rate (409 missing_rate naming it), writing nothing', async () => {
    const res = await call('POST', '/billing/runs', { periodId: w.october.id });
    expect([res.status, reasonOf(res), res.body.error.details.entryIds]).toEqual([409, 'missing_rate', [w.billable[6]]]);
    expect((await app.db.sql`select 1 from billing_runs where workspace_id = ${w.ws.id}`).length).toBe(0);
    const bad = await call('POST', '/billing/runs', { periodId: w.october.id, billUnratedAtZero: 'yes' });
    expect(bad.status).toBe(400);
  });

  it('bills with billUnratedAtZero; each line keeps the rate of its date, and a later rate change alters nothing', async () => {
    const taxed = await call('PATCH', `/clients/${w.initech.id}`, { taxRateBasisPoints: 1900, taxLabel: 'MwSt. 19 %', paymentTermsDays: 30 });
    expect([taxed.status, taxed.body.taxRateBasisPoints, taxed.body.taxLabel, taxed.body.paymentTermsDays]).toEqual([200, 1900, 'MwSt. 19 %', 30]);
    expect((await call('PATCH', `/clients/${w.acme.id}`, { taxNote: 'Reverse charge: VAT to be accounted for by the recipient.' })).status).toBe(200);
    for (const bad of [{ taxRateBasisPoints: 10001 }, { taxRateBasisPoints: 1.5 }, { paymentTermsDays: -1 }, { taxLabel: '' }]) {
      expect((await call('PATCH', `/clients/${w.initech.id}`, bad)).status, JSON.stringify(bad)).toBe(400);
    }
    const res = await call('POST', '/billing/runs', { periodId: w.october.id, billUnratedAtZero: true });
    expect(res.status).toBe(201);
    await allocateRun(jobCtx(app.db.sql), { runId: res.body.id });
    const lines = async () =>
      app.db.sql<{ entryId: string; currency: string; rate: number | null; list: number; amount: number }[]>`
        select entry_id as "entryId", currency, rate_minor as rate, list_amount_minor as list, amount_minor as amount
        from billing_run_entries where run_id = ${res.body.id}`;
    const byEntry = Object.fromEntries((await lines()).map((l) => [l.entryId, l]));
    const b = w.billable;
    expect(byEntry[b[0]!]).toEqual({ entryId: b[0], currency: 'EUR', rate: 10000, list: 15000, amount: 15000 });
    expect(byEntry[b[1]!]).toMatchObject({ currency: 'EUR', rate: 10000, list: 5000, amount: 5000 });
    expect(byEntry[b[2]!]).toMatchObject({ currency: 'EUR', rate: 10000, list: 7500, amount: 0 }); // free
    expect(byEntry[b[3]!]).toMatchObject({ currency: 'EUR', rate: 10000, list: 20000, amount: 0 }); // bank
    expect(byEntry[b[4]!]).toMatchObject({ currency: 'USD', rate: 9000, list: 9000, amount: 9000 });
    expect(byEntry[b[5]!]).toMatchObject({ currency: 'USD', rate: 9999, list: 14999, amount: 14999 });
    expect(byEntry[b[6]!]).toMatchObject({ currency: 'USD', rate: null, list: 0, amount: 0 });
    const before = await lines();
    expect((await call('PUT', '/rates', { rates: [] })).status).toBe(200);
    expect((await call('PATCH', `/clients/${w.acme.id}`, { currency: 'GBP', taxNote: null })).status).toBe(200);
    expect((await call('PATCH', `/clients/${w.initech.id}`, { taxRateBasisPoints: 0, paymentTermsDays: null })).status).toBe(200);
    expect(await lines()).toEqual(before);
  });

  it('renders the money on the documents: amounts per row, subtotal and total due in the client locale (html), plain in the csv', async () => {
    const sql = app.db.sql;
    // rendered after the rates were emptied and Acme moved to GBP: the documents show what the run stored
    await drainBillingJobs(sql, jobCtx(sql));
    const docs = await sql<{ number: string; format: string; content: Buffer }[]>`
      select d.number, d.format, d.content from documents d join timesheets s on s.id = d.timesheet_id
      where d.workspace_id = ${w.ws.id} and s.client_id = ${w.acme.id}`;
    const html = docs.find((d) => d.format === 'html')!.content.toString('utf8');
    const csv = docs.find((d) => d.format === 'csv')!.content.toString('utf8');
    // en-US, EUR: 150.00 + 50.00 on the paid ticket's row, the free and bank rows at zero, total due 200.00
    expect(html).toContain('<th class="num">Amount</th>');
    expect(html).toContain('<td class="num">€200.00</td></tr>');
    expect(html).toMatch(/<tr class="grand due"><th>Total due<\/th><td class="num">€200\.00<\/td><\/tr>/);
    expect(html).not.toContain('£');
    const rows = csv
      .trimEnd()
      .split('\r\n')
      .map((r) => r.split(','));
    expect(rows[0]!.slice(-4)).toEqual(['currency', 'rate', 'list_amount', 'amount']);
    const amounts = rows.slice(1).map((r) => r.slice(-4));
    expect(amounts).toContainEqual(['EUR', '100.00', '150.00', '150.00']);
    expect(amounts).toContainEqual(['EUR', '100.00', '75.00', '0.00']);
    expect(amounts.reduce((n, r) => n + Number(r[3]!.replace('.', '')), 0)).toBe(20000);
    // Initech's documents (de-DE, one per project): USD in German notation; the unrated line at zero with no rate
    const ini = await sql<{ format: string; content: Buffer }[]>`
      select d.format, d.content from documents d join timesheets s on s.id = d.timesheet_id where d.workspace_id = ${w.ws.id} and s.client_id = ${w.initech.id}`;
    const iniHtml = ini
      .filter((d) => d.format === 'html')
      .map((d) => d.content.toString('utf8'))
      .join('\n');
    // 239.99 USD + MwSt. 19 % of it (45.5981 rounds to 45.60) = 285.59, due 30 days after the run's day
    expect(iniHtml).toContain('<tr class="tax"><th>MwSt. 19 %</th><td class="num">45,60\u00a0$</td></tr>');
    expect(iniHtml).toContain('<th>Gesamtbetrag</th><td class="num">285,59\u00a0$</td>');
    const [due] = await sql<{ d: string }[]>`
      select to_char((r.created_at at time zone 'UTC')::date + 30, 'DD.MM.YYYY') as d from billing_runs r where r.workspace_id = ${w.ws.id} order by created_at limit 1`;
    expect(iniHtml).toContain(`<tr><th>Fällig am</th><td>${due!.d}</td></tr>`);
    expect(html).toContain('<p class="tax-note">Reverse charge: VAT to be accounted for by the recipient.</p>');
    const iniCsv = ini
      .filter((d) => d.format === 'csv')
      .map((d) => d.content.toString('utf8'))
      .join('');
    expect(iniCsv).toContain(',USD,,0.00,0.00\r\n');
  });

  it('fails at allocation a run whose rates went missing after it started (never bills unconfirmed time at zero)', async () => {
    const sql = app.db.sql;
    // void the run above so its entries qualify again, then start one while rates exist, and remove them before allocating
    const [first] = await sql<{ id: string }[]>`select id from billing_runs where workspace_id = ${w.ws.id}`;
    expect((await call('POST', `/billing/runs/${first!.id}/void`, { reason: 'rates test' })).status).toBe(200);
    await sql`update time_entries set category_id = ${dev.id} where id = ${w.billable[6]!}`;
    await call('PATCH', `/clients/${w.acme.id}`, { currency: 'EUR' });
    expect((await call('PUT', '/rates', { rates: RATES() })).status).toBe(200);
    const res = await call('POST', '/billing/runs', { periodId: w.october.id });
    expect(res.status).toBe(201);
    expect((await call('PUT', '/rates', { rates: RATES().slice(2) })).status).toBe(200); // Acme's EUR rates gone
    await allocateRun(jobCtx(sql), { runId: res.body.id });
    const [run] = await sql<{ status: string; error: string }[]>`select status, error from billing_runs where id = ${res.body.id}`;
    expect(run!.status).toBe('failed');
    expect(run!.error).toMatch(/^missing_rate: 4 paid entries|^missing_rate: 2 paid entries/);
    expect((await sql`select 1 from billing_run_entries where run_id = ${res.body.id}`).length).toBe(0);
  });

  it('is Owner/Admin: a member may not confirm zero-rated billing either (403)', async () => {
    const member = await login(app, w.member.email, w.member.password);
    const res = await call('POST', '/billing/runs', { periodId: w.october.id, billUnratedAtZero: true }, member);
    expect([res.status, reasonOf(res)]).toEqual([403, 'admin_only']);
  });
});

describe('rounding', () => {
  it('the SQL of the allocation and lineAmountMinor round every line alike (half away from zero)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(
            fc.integer({ min: -1440, max: 1440 }).filter((m) => m !== 0),
            fc.integer({ min: 0, max: 50_000_000 }),
          ),
          { minLength: 1, maxLength: 200 },
        ),
        async (pairs) => {
          const { lineAmountSql } = await import('../src/core/rates/resolve.ts');
          const sql = app.db.sql;
          const rows = await sql<{ a: number }[]>`
            select ${lineAmountSql(sql, sql`p.m`, sql`p.r`)} as a
            from unnest(${pairs.map((p) => p[0])}::int[], ${pairs.map((p) => p[1])}::int[]) with ordinality as p(m, r, n) order by p.n`;
          expect(rows.map((r) => r.a)).toEqual(pairs.map(([m, r]) => lineAmountMinor(m, r)));
        },
      ),
      { numRuns: 30 },
    );
    expect([lineAmountMinor(90, 9999), lineAmountMinor(-90, 9999), lineAmountMinor(1, 30), lineAmountMinor(1, 29)]).toEqual([14999, -14999, 1, 0]);
  });

  it('a document’s total due is the sum of its rounded lines plus the tax, for random entries, rates, tax rates and currencies (csv and html)', () => {
    const line = fc.record({
      minutes: fc.integer({ min: -1440, max: 1440 }).filter((m) => m !== 0),
      policy: fc.constantFrom('paid', 'free', 'bank') as fc.Arbitrary<LinePolicy>,
      rate: fc.option(fc.integer({ min: 0, max: 50_000_000 })),
    });
    fc.assert(
      fc.property(
        fc.array(line, { minLength: 1, maxLength: 60 }),
        fc.constantFrom('EUR', 'JPY', 'KWD', 'USD'),
        fc.constantFrom('en-US', 'de-DE', 'fr-FR'),
        fc.integer({ min: 0, max: 10000 }),
        (raw, currency, locale, bp) => {
          const lines: TimesheetLine[] = raw.map((r, i) => {
            const list = lineAmountMinor(r.minutes, r.rate ?? 0);
            return {
              entryId: `e${i}`,
              ticketId: `t${i % 7}`,
              humanId: `WEB-${i % 7}`,
              text: 'Work',
              spentOn: '2026-10-01',
              person: 'Anna',
              category: 'Dev',
              minutes: r.minutes,
              policy: r.policy,
              bankName: r.policy === 'bank' ? 'Bank' : null,
              correction: r.minutes < 0,
              rateMinor: r.rate,
              listAmountMinor: list,
              amountMinor: r.policy === 'paid' ? list : 0,
            };
          });
          const totals = totalsOf(lines);
          const model: TimesheetModel = {
            number: 'ACME-2026-0001',
            version: 1,
            scope: 'combined',
            agency: { name: 'Agency' },
            client: { id: 'c', name: 'Acme', code: 'ACME', locale },
            currency,
            tax: { rateBasisPoints: bp, label: null, note: null },
            dueOn: null,
            period: { start: '2026-10-01', end: '2026-10-31' },
            issuedOn: '2026-11-01',
            sections: [{ project: { id: 'p', key: 'WEB', name: 'Web' }, lines, totals }],
            totals,
            banks: [],
          };
          const sum = lines.reduce((n, l) => n + l.amountMinor!, 0);
          expect(totals.amountMinor).toBe(sum);
          const csvSum = renderCsv(model)
            .trimEnd()
            .split('\r\n')
            .slice(1)
            .reduce((n, r) => n + Number(r.split(',').at(-1)!.replace('.', '')), 0);
          expect(csvSum).toBe(sum);
          // the tax, rounded once on the sum of the lines, exactly: (sum × bp / 10,000) half away from zero
          const exact = (BigInt(Math.abs(sum)) * BigInt(bp) * 2n + 10000n) / 20000n;
          const tax = sum < 0 ? 0 - Number(exact) : Number(exact);
          const due = formatterFor(locale).money(sum + tax, currency);
          if (bp > 0) {
            expect(renderHtml(model)).toContain(
              `<tr class="tax"><th>${labelsFor(locale).tax}</th><td class="num">${formatterFor(locale).money(tax, currency)}</td></tr>`,
            );
          }
          expect(renderHtml(model)).toContain(`<th>${labelsFor(locale).totalDue}</th><td class="num">${due}</td>`);
        },
      ),
      { numRuns: 200 },
    );
  });
});
