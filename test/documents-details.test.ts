import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTimesheet } from '../src/core/documents/load-timesheet.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { PNG_1PX } from './helpers/timesheet-full-fixture.ts';
import { drainBillingJobs, jobCtx, makeBillingWorld, type BillingWorld } from './billing-world.ts';

/**
 * What a timesheet prints about the parties (issue 23): the agency's legal name, address, tax id,
 * bank details and logo (PATCH /settings), the client's billing address, tax id and line layout
 * (PATCH /clients), the run's PO number (POST /billing/runs). All of it is fixed on the timesheet
 * at allocation: a later change alters no issued document and no re-rendered version.
 */

let app: TestApp;
let w: BillingWorld;
const path = (p: string) => `/api/w/${w.ws.slug}${p}`;
const call = (method: string, p: string, body?: unknown) => app.call(method, path(p), { session: w.session, body });
const reasonOf = (res: { body: any }) => res.body?.error?.details?.reason;
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]).toString('base64');

beforeAll(async () => {
  app = await startTestApp();
  w = await makeBillingWorld(app);
});
afterAll(() => app.close());

/** The html of each current timesheet of the run, by client code. */
async function htmlOf(runId: string): Promise<Record<string, string[]>> {
  const rows = await app.db.sql<{ code: string; content: Buffer }[]>`
    select c.code, d.content from documents d join clients c on c.id = d.client_id
    where d.run_id = ${runId} and d.format = 'html' and not d.redacted order by d.number, d.version`;
  const out: Record<string, string[]> = {};
  for (const r of rows) (out[r.code] ??= []).push(r.content.toString('utf8'));
  return out;
}

async function billOctober(body: Record<string, unknown> = {}): Promise<string> {
  const res = await call('POST', '/billing/runs', { periodId: w.october.id, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await drainBillingJobs(app.db.sql, jobCtx(app.db.sql));
  return res.body.id;
}

describe('a workspace without these settings', () => {
  it('fixes empty details and renders its timesheets as before (no viewport, no new part, the model has no new key)', async () => {
    const runId = await billOctober();
    const run = await call('GET', `/billing/runs/${runId}`);
    expect(run.body.poNumber).toBeNull();
    const [sheet] = await app.db.sql<{ id: string }[]>`select id from timesheets where run_id = ${runId} and client_id = ${w.acme.id}`;
    const model = (await loadTimesheet(app.db.sql, sheet!.id))!;
    expect(Object.keys(model).sort()).toEqual([
      'agency',
      'banks',
      'client',
      'currency',
      'dueOn',
      'issuedOn',
      'number',
      'period',
      'scope',
      'sections',
      'tax',
      'totals',
      'version',
    ]);
    expect(Object.keys(model.agency)).toEqual(['name']);
    expect(Object.keys(model.client).sort()).toEqual(['code', 'id', 'locale', 'name']);
    for (const html of Object.values(await htmlOf(runId)).flat()) {
      for (const part of ['viewport', 'class="logo"', 'class="payment"', 'class="address"', 'class="taxid"']) expect(html).not.toContain(part);
    }
    expect((await call('POST', `/billing/runs/${runId}/void`, { reason: 'details test' })).status).toBe(200);
  });
});

describe('PATCH /settings: what documents print about the agency', () => {
  it('stores the legal name, address, tax id, bank details and logo; GET shows them (the logo by type and size)', async () => {
    const res = await call('PATCH', '/settings', {
      legalName: 'Nordlicht Digital GmbH',
      address: 'Hafenstraße 12\r\n20457 Hamburg',
      taxId: 'DE123456789',
      bankAccountHolder: 'Nordlicht Digital GmbH',
      bankIban: 'de89 3704 0044 0532 0130 00',
      bankBic: 'cobadeffxxx',
      bankDetails: 'Please quote the document number.',
      logo: PNG_1PX,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      legalName: 'Nordlicht Digital GmbH',
      address: 'Hafenstraße 12\n20457 Hamburg',
      taxId: 'DE123456789',
      bankIban: 'DE89370400440532013000',
      bankBic: 'COBADEFFXXX',
      logo: { contentType: 'image/png', bytes: Buffer.from(PNG_1PX, 'base64').length },
    });
    expect((await call('GET', '/settings')).body).toEqual(res.body);
  });

  it.each([
    ['bad_iban', { bankIban: 'DE88370400440532013000' }],
    ['bad_bic', { bankBic: 'COBA' }],
    ['bad_logo', { logo: Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00').toString('base64') }],
    ['bad_logo', { logo: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>').toString('base64') }],
    ['bad_logo', { logo: 'not base64!' }],
    // an empty file (the console's form with none chosen) is refused, never read as "remove the logo"
    ['bad_logo', { logo: '' }],
    ['logo_too_large', { logo: Buffer.concat([Buffer.from(PNG_1PX, 'base64'), Buffer.alloc(256 * 1024)]).toString('base64') }],
    ['validation', { legalName: 'a\u0007b' }],
    ['validation', { address: 'x'.repeat(501) }],
  ])('refuses a bad value: 400 %s (case %#), changing nothing', async (reason, body) => {
    const before = (await call('GET', '/settings')).body;
    const res = await call('PATCH', '/settings', body);
    expect([res.status, reasonOf(res) ?? res.body.error?.code]).toEqual([400, reason]);
    expect((await call('GET', '/settings')).body).toEqual(before);
  });
});

describe('PATCH /clients: billing address, tax id, line layout', () => {
  it('stores them; refuses a bad layout or an overlong address', async () => {
    const res = await call('PATCH', `/clients/${w.acme.id}`, {
      billingAddress: 'Acme Corp\nAccounts payable\n1 Main St',
      taxId: 'US-12-3456789',
      timesheetLines: 'entry',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ billingAddress: 'Acme Corp\nAccounts payable\n1 Main St', taxId: 'US-12-3456789', timesheetLines: 'entry' });
    expect((await call('GET', `/clients/${w.initech.id}`)).body).toMatchObject({ billingAddress: null, taxId: null, timesheetLines: 'ticket' });
    for (const bad of [{ timesheetLines: 'day' }, { billingAddress: 'x'.repeat(501) }, { taxId: '' }]) {
      expect((await call('PATCH', `/clients/${w.acme.id}`, bad)).status, JSON.stringify(bad)).toBe(400);
    }
  });
});

describe('a run with a PO number', () => {
  let runId: string;

  it('refuses an empty or overlong PO number', async () => {
    for (const poNumber of ['', ' ', 'x'.repeat(101), 'a\nb']) {
      const res = await call('POST', '/billing/runs', { periodId: w.october.id, poNumber });
      expect(res.status, JSON.stringify(poNumber)).toBe(400);
    }
  });

  it('prints every detail: agency block with the embedded logo, client block, PO number, bank details, per-entry lines for Acme', async () => {
    runId = await billOctober({ poNumber: 'PO-4711' });
    expect((await call('GET', `/billing/runs/${runId}`)).body.poNumber).toBe('PO-4711');
    const html = await htmlOf(runId);
    const acme = html.ACME![0]!;
    expect(acme).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(acme).toContain(`<img class="logo" src="data:image/png;base64,${PNG_1PX}" alt="">`);
    expect(acme).toContain('<div class="name">Nordlicht Digital GmbH</div><div class="address">Hafenstraße 12\n20457 Hamburg</div>');
    expect(acme).toContain('<div class="taxid">Tax ID: DE123456789</div>');
    expect(acme).toContain(
      '<div class="name">Acme Corp</div><div class="address">Acme Corp\nAccounts payable\n1 Main St</div><div class="taxid">Tax ID: US-12-3456789</div>',
    );
    expect(acme).toContain('<tr><th>PO number</th><td>PO-4711</td></tr>');
    // the first run of this file was voided: this document replaces its number
    expect(acme).toContain('<p class="replaces">Replaces No. ACME-2026-0001</p>');
    expect(acme).toContain('<tr><th>IBAN</th><td>DE89 3704 0044 0532 0130 00</td></tr>');
    expect(acme).toContain('<th>Date</th><th>Ticket</th><th>Description</th><th>Person</th>');
    expect(acme).toContain('<td class="date">10/02/2026</td>');
    // Initech keeps per-ticket rows and has no address of its own, but prints the agency's details too
    for (const ini of html.INI!) {
      expect(ini).toContain('<tr><th>Bestellnummer</th><td>PO-4711</td></tr>');
      expect(ini).toContain('<div class="taxid">USt-IdNr.: DE123456789</div>');
      expect(ini).toContain('<th>Ticket</th><th>Beschreibung</th><th>Datum</th><th>Personen</th>');
      expect(ini).not.toContain('<div class="name">Initech GmbH</div><div class');
    }
  });

  it('a later change of the settings and the client alters no re-rendered version (a redaction renders v2 with the details fixed at allocation)', async () => {
    expect(
      (
        await call('PATCH', '/settings', {
          legalName: 'Someone Else Ltd',
          address: 'Elsewhere 1',
          taxId: 'GB000',
          bankIban: 'GB82 WEST 1234 5698 7654 32',
          bankBic: null,
          bankDetails: null,
          logo: JPEG,
        })
      ).status,
    ).toBe(200);
    expect((await call('PATCH', `/clients/${w.acme.id}`, { billingAddress: 'New address', taxId: null, timesheetLines: 'ticket' })).status).toBe(200);
    const redacted = await call('POST', `/tickets/${w.tickets.paid.id}/redact`, { reason: 'details test' });
    expect(redacted.status).toBe(200);
    await drainBillingJobs(app.db.sql, jobCtx(app.db.sql));
    const [v2] = await app.db.sql<{ version: number; content: Buffer }[]>`
      select d.version, d.content from documents d where d.run_id = ${runId} and d.client_id = ${w.acme.id} and d.format = 'html' and not d.redacted`;
    expect(v2!.version).toBe(2);
    const html = v2!.content.toString('utf8');
    expect(html).toContain(`<img class="logo" src="data:image/png;base64,${PNG_1PX}" alt="">`);
    expect(html).toContain('Nordlicht Digital GmbH');
    expect(html).toContain('Hafenstraße 12');
    expect(html).toContain('Tax ID: US-12-3456789');
    expect(html).toContain('DE89 3704 0044 0532 0130 00');
    expect(html).toContain('COBADEFFXXX');
    expect(html).toContain('PO-4711');
    expect(html).toContain('<th>Date</th><th>Ticket</th><th>Description</th><th>Person</th>');
    for (const later of ['Someone Else', 'Elsewhere', 'GB82', 'New address', 'image/jpeg']) expect(html).not.toContain(later);
  });
});
