import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { PdfRenderer } from '../src/core/documents/pdf-renderer.ts';
import { createMailer } from '../src/jobs/machinery/mail-from-config.ts';
import { createPdfRenderer, findChromium } from '../src/jobs/machinery/pdf.ts';
import { startWorker, type StartedWorker } from '../src/jobs/worker.ts';
import { makeLogger } from '../src/log.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeCategory } from './helpers/factories.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.ts';
import { makeBillingWorld, type BillingWorld } from './billing-world.ts';

/**
 * Issue 23's acceptance, end to end through HTTP with a real worker, SMTP server and Chromium:
 * rates that change in the middle of the period, two currencies (Acme in EUR, Initech in USD), a
 * tax-exempt client (reverse charge) and a taxed one with payment terms, a bank draw-down and free
 * time at zero; pdftotext of each pdf shows the line amounts, the subtotal, the tax, the total due,
 * the due date and "Page 1 of N" in the client's language.
 */
let app: TestApp;
let smtp: SmtpSink;
let pdf: PdfRenderer;
let worker: StartedWorker;
let w: BillingWorld;
const run = promisify(execFile);

beforeAll(async () => {
  app = await startTestApp();
  smtp = await startSmtpSink();
  const chromium = findChromium();
  if (!chromium) throw new Error('Chromium is not installed (apt-get install chromium): the pdf timesheets cannot be tested');
  const log = makeLogger('silent');
  pdf = createPdfRenderer(chromium, log)!;
  const services = {
    sql: app.db.sql,
    now: () => new Date(),
    log,
    pdf,
    mailer: createMailer({ SMTP_URL: smtp.url }),
    mailFrom: 'Northwind <billing@northwind.test>',
  };
  worker = await startWorker(app.db.url, services, { concurrency: 4, pollInterval: 100 });
  w = await makeBillingWorld(app);
}, 60_000);
afterAll(async () => {
  await worker?.stop();
  await pdf?.close();
  await smtp?.close();
  await app?.close();
});

const api = (p: string) => `/api/w/${w.ws.slug}${p}`;
const asOwner = async (method: string, p: string, body?: unknown) => {
  const res = await app.call(method, api(p), { session: w.session, body });
  expect(res.status, `${method} ${p}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body;
};

async function settled(runId: string) {
  for (let i = 0; i < 1200; i++) {
    const r = await asOwner('GET', `/billing/runs/${runId}`);
    if (['completed', 'failed'].includes(r.status)) return r;
    await new Promise((ok) => setTimeout(ok, 100));
  }
  throw new Error('the run did not finish in 120 s');
}

/** pdftotext of a document, whitespace runs (and no-break spaces) as one space. */
async function pdfText(documentId: string): Promise<string> {
  const res = await fetch(`${app.base}${api(`/documents/${documentId}/download`)}`, { headers: { cookie: w.session.cookie } });
  expect(res.status).toBe(200);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'wt-money-'));
  await writeFile(path.join(dir, 'doc.pdf'), Buffer.from(await res.arrayBuffer()));
  const { stdout } = await run('pdftotext', ['-layout', path.join(dir, 'doc.pdf'), '-']);
  return stdout.replace(/[\s\u00a0\u202f]+/g, ' ');
}

it('bills rates, two currencies, tax and a bank draw-down, and the pdf shows every amount, the tax, the total due, the due date and its pages', async () => {
  // every entry of the world is a developer's
  const dev = await makeCategory(app.db.sql, w.ws, 'Developer');
  await app.db.sql`update time_entries set category_id = ${dev.id} where workspace_id = ${w.ws.id}`;
  // Acme: EUR, reverse charge (no tax line, the note), a line per entry; Initech: USD, MwSt. 19 %, 30 days
  await asOwner('PATCH', `/clients/${w.acme.id}`, { taxNote: 'Reverse charge: VAT to be accounted for by the recipient.', timesheetLines: 'entry' });
  await asOwner('PATCH', `/clients/${w.initech.id}`, { currency: 'USD', taxRateBasisPoints: 1900, taxLabel: 'MwSt. 19 %', paymentTermsDays: 30 });
  await asOwner('PUT', '/rates', {
    rates: [
      // the default rate changes in the middle of October
      { categoryId: dev.id, currency: 'EUR', hourlyRateMinor: 10000, effectiveFrom: '2026-01-01' },
      { categoryId: dev.id, currency: 'EUR', hourlyRateMinor: 12000, effectiveFrom: '2026-10-04' },
      { categoryId: dev.id, currency: 'USD', hourlyRateMinor: 9000, effectiveFrom: '2026-01-01' },
      { categoryId: dev.id, clientId: w.initech.id, currency: 'USD', hourlyRateMinor: 9999, effectiveFrom: '2026-10-15' },
    ],
  });

  const preview = await asOwner('POST', '/billing/runs', { periodId: w.october.id, dryRun: true });
  expect(preview.warnings ?? []).toEqual([]);
  const started = await asOwner('POST', '/billing/runs', { periodId: w.october.id });
  const done = await settled(started.id);
  expect(done.status, done.error ?? '').toBe('completed');
  const money = Object.fromEntries(done.clients.map((c: any) => [c.clientId, { currency: c.currency, amountMinor: c.amountMinor }]));
  // Acme: 90 min at 100.00 (2 Oct) + 30 min at 100.00 (3 Oct) = 200.00; free 45 min and bank 120 min at zero
  // Initech: 60 min at 90.00 (7 Oct) + 90 min at 99.99 (31 Oct, 149.985 -> 149.99) twice (APP and API)
  expect(money).toEqual({ [w.acme.id]: { currency: 'EUR', amountMinor: 20000 }, [w.initech.id]: { currency: 'USD', amountMinor: 9000 + 14999 + 14999 } });

  const { documents } = await asOwner('GET', `/documents?runId=${done.id}`);
  const pdfOf = (number: string) => documents.find((d: any) => d.number === number && d.format === 'pdf');

  const acme = await pdfText(pdfOf('ACME-2026-0001').id);
  // a line per entry with the rate of its date: 100.00 until 3 October, 120.00 from the 4th
  expect(acme).toContain('Maya Member 1.50 €100.00 €150.00');
  expect(acme).toContain('Adam Admin 0.50 €100.00 €50.00');
  // free and bank-drawn time at zero, with what it would have cost
  expect(acme).toContain('0.75 €120.00 €0.00 Free at rate €90.00');
  expect(acme).toContain('2.00 €120.00 €0.00 at rate €240.00');
  expect(acme).toContain('Subtotal WEB 4.75 €200.00');
  expect(acme).toContain('Prepaid 10.00 2.00 8.00'); // the bank: balance before, drawn, after
  expect(acme).toContain('Total due €200.00');
  expect(acme).toContain('Reverse charge: VAT to be accounted for by the recipient.');
  expect(acme).not.toMatch(/\bTax\b/);
  expect(acme).toContain('Page 1 of 1');

  // Initech, de-DE, one timesheet per project: APP 239.99 + 19 % (45.60) = 285.59 $, due 30 days after the run's day
  const [due] = await app.db.sql<{ d: string }[]>`
    select to_char((created_at at time zone 'UTC')::date + 30, 'DD.MM.YYYY') as d from billing_runs where id = ${done.id}`;
  const appSheet = documents.find((d: any) => d.format === 'pdf' && d.clientId === w.initech.id && /App/i.test(d.projectName ?? ''));
  const initech = await pdfText((appSheet ?? pdfOf('INI-2026-0002')).id);
  // a line per ticket (Initech's setting): 60 min at 90.00 + 90 min at 99.99 (the client's own rate from the 15th)
  expect(initech).toMatch(/APP-1 Push notifications .* 2,50 2,50 239,99 \$/);
  expect(initech).toMatch(/Zwischensumme 239,99 \$/);
  expect(initech).toMatch(/MwSt\. 19 % 45,60 \$/);
  expect(initech).toMatch(/Gesamtbetrag 285,59 \$/);
  expect(initech).toContain(`Fällig am ${due!.d}`);
  expect(initech).toContain('Seite 1 von 1');

  // the emails carry the same pdf: one per recipient and timesheet
  expect(smtp.messagesTo('ap@acme.test')).toHaveLength(1);
  expect(smtp.messagesTo('buchhaltung@initech.test')).toHaveLength(2);
}, 180_000);
