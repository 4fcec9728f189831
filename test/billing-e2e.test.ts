import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPdfRenderer, findChromium } from '../src/jobs/machinery/pdf.ts';
import type { PdfRenderer } from '../src/core/documents/pdf-renderer.ts';
import { createMailer } from '../src/jobs/machinery/mail-from-config.ts';
import { startWorker, type StartedWorker } from '../src/jobs/worker.ts';
import { makeLogger } from '../src/log.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeToken } from './helpers/factories.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.ts';
import { makeBillingWorld, type BillingWorld } from './billing-world.ts';

/**
 * The whole billing flow through HTTP as an operator would, with a real graphile-worker, a real
 * SMTP server and Debian's Chromium: log time, close the period, dry run = run, documents in
 * html, csv and pdf, one email per recipient and timesheet, downloads, void, bill again, redact.
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
    mailFrom: 'Northwind Billing <billing@northwind.test>',
  };
  worker = await startWorker(app.db.url, services, { concurrency: 4, pollInterval: 100 });
  w = await makeBillingWorld(app, { octoberOpen: true });
}, 60_000);
afterAll(async () => {
  await worker?.stop();
  await pdf?.close();
  await smtp?.close();
  await app?.close();
});

const api = (p: string) => `/api/w/${w.ws.slug}${p}`;
const asOwner = (method: string, p: string, body?: unknown) => app.call(method, api(p), { session: w.session, body });

async function settled(runId: string, want = 'completed') {
  for (let i = 0; i < 900; i++) {
    const run = (await asOwner('GET', `/billing/runs/${runId}`)).body;
    if (['completed', 'failed'].includes(run.status)) {
      expect(run.status, run.error ?? '').toBe(want);
      return run;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const errors = await app.db.sql`select task, attempt, outcome, error from job_history where outcome <> 'succeeded' order by id`;
  const jobs = await app.db
    .sql`select t.identifier, j.attempts, j.locked_by, j.run_at, j.last_error from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id`;
  const run = (await asOwner('GET', `/billing/runs/${runId}`)).body;
  throw new Error(`the run did not finish in 90 s: ${run.status}; attempts not succeeded: ${JSON.stringify(errors)}; jobs: ${JSON.stringify(jobs)}`);
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const bytesOf = async (res: Response) => Buffer.from(await res.arrayBuffer());

it('bills a period end to end: documents in three formats, numbered, emailed once, downloadable; void and bill again; redaction re-renders', async () => {
  // 1. time logged through the API by a member, the period closed by the owner
  const member = (await makeToken(app.db.sql, w.ws, w.member)).token;
  const logged = await app.call('POST', api('/time'), { token: member, body: { ticketId: w.tickets.paid.id, spentOn: '2026-10-15', minutes: 30 } });
  expect(logged.status, JSON.stringify(logged.body)).toBe(201);
  expect((await asOwner('POST', `/periods/${w.october.id}/close`, {})).status).toBe(200);

  // 2. the dry run is what the run bills
  const preview = (await asOwner('POST', '/billing/runs', { periodId: w.october.id, dryRun: true })).body;
  expect(preview.entryCount).toBe(w.billable.length + 1);
  const started = await asOwner('POST', '/billing/runs', { periodId: w.october.id });
  expect(started.status).toBe(201);
  const done = await settled(started.body.id);
  expect(done).toMatchObject({ entryCount: preview.entryCount, minutes: preview.minutes, billableMinutes: preview.billableMinutes });
  expect(done.clients).toEqual(preview.clients.map(({ projects: _p, banks: _b, documents: _d, ...totals }: any) => totals));

  // 3. the documents: three timesheets in html, csv and pdf, numbered per client and year
  const list = (await asOwner('GET', `/documents?runId=${done.id}`)).body;
  expect(list.scope).toBe('all');
  expect(list.documents.map((d: any) => `${d.number}.${d.format}`).sort()).toEqual(
    ['ACME-2026-0001', 'INI-2026-0001', 'INI-2026-0002'].flatMap((n) => ['csv', 'html', 'pdf'].map((f) => `${n}.${f}`)),
  );
  expect(done.documentIds.sort()).toEqual(list.documents.map((d: any) => d.id).sort());
  for (const d of list.documents) {
    expect(d).toMatchObject({ version: 1, voided: false, redacted: false, periodStart: '2026-10-01' });
    expect(d.locale).toBe(d.clientId === w.initech.id ? 'de-DE' : 'en-US');
    const res = await fetch(`${app.base}${api(`/documents/${d.id}/download`)}`, { headers: { cookie: w.session.cookie } });
    expect(res.status).toBe(200);
    const bytes = await bytesOf(res);
    expect([d.bytes, d.checksum]).toEqual([bytes.length, sha256(bytes)]);
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    if (d.format === 'html') expect(res.headers.get('content-disposition')).toBe('inline');
    else expect(res.headers.get('content-disposition')).toContain(`attachment; filename="${d.number}.${d.format}"`);
    expect(res.headers.get('content-type')).toBe(
      { html: 'text/html; charset=utf-8', csv: 'text/csv; charset=utf-8', pdf: 'application/pdf' }[d.format as string],
    );
  }
  const doc = (number: string, format: string) => list.documents.find((d: any) => d.number === number && d.format === format);
  const download = async (d: any) => bytesOf(await fetch(`${app.base}${api(`/documents/${d.id}/download`)}`, { headers: { cookie: w.session.cookie } }));
  const apiSheet = doc('INI-2026-0001', 'html'); // project API comes before APP
  expect(apiSheet.projectName).toBeTruthy();
  const initechHtml = (await download(apiSheet)).toString('utf8');
  expect(initechHtml).toContain('1,50'); // 90 minutes on 31 October, in German
  expect(initechHtml).toContain('31.10.2026');

  // 4. the pdf is real: its text holds the client, every ticket line and the total
  const dir = await mkdtemp(path.join(os.tmpdir(), 'wt-e2e-'));
  await writeFile(path.join(dir, 'acme.pdf'), await download(doc('ACME-2026-0001', 'pdf')));
  const { stdout: text } = await run('pdftotext', ['-layout', path.join(dir, 'acme.pdf'), '-']);
  expect(text).toContain('Acme Corp');
  for (const t of [w.tickets.paid, w.tickets.free, w.tickets.banked]) expect(text).toContain(t.humanId);
  expect(text).toContain('Checkout redesign (phase 1 of 3)');
  expect(text).toContain('5.25'); // 315 minutes in all on Acme's timesheet

  // 5. one email per recipient and timesheet, carrying the pdf and the csv as they were stored
  expect(smtp.messagesTo('ap@acme.test')).toHaveLength(1);
  expect(smtp.messagesTo('cfo@acme.test')).toHaveLength(1);
  expect(smtp.messagesTo('buchhaltung@initech.test')).toHaveLength(2);
  const mail = smtp.messagesTo('ap@acme.test')[0]!;
  expect(mail.headers.get('auto-submitted')).toBe('auto-generated');
  const attached = Object.fromEntries(mail.attachments.map((a) => [a.filename, sha256(a.content)]));
  expect(attached).toEqual({
    'ACME-2026-0001.pdf': doc('ACME-2026-0001', 'pdf').checksum,
    'ACME-2026-0001.csv': doc('ACME-2026-0001', 'csv').checksum,
  });
  expect(
    doc('ACME-2026-0001', 'html')
      .deliveries.map((x: any) => `${x.email}:${x.state}`)
      .sort(),
  ).toEqual(['ap@acme.test:sent', 'cfo@acme.test:sent']);

  // 6. every job's outcome is in job_history (the worker writes it in batches, within a moment of the job's end)
  const history = async () => [
    ...(await app.db.sql<{ task: string; n: number; docs: number }[]>`
    select task, count(*)::int as n, count(document_id)::int as docs from job_history
    where outcome = 'succeeded' and (run_id = ${done.id} or timesheet_id in (select id from timesheets where run_id = ${done.id})
                                     or delivery_id in (select dd.id from document_deliveries dd join timesheets s on s.id = dd.timesheet_id where s.run_id = ${done.id}))
    group by task order by task`),
  ];
  await expect.poll(history, { timeout: 10_000 }).toEqual([
    { task: 'billing:allocate', n: 1, docs: 0 },
    { task: 'documents:deliver', n: 4, docs: 0 },
    { task: 'documents:render', n: 9, docs: 9 },
  ]);

  // 7. void: documents stay, voided; entries free again; a second run bills them with new numbers
  const voided = await asOwner('POST', `/billing/runs/${done.id}/void`, { reason: 'Wrong hourly rates' });
  expect(voided.body.status).toBe('voided');
  const [{ billed }] = await app.db.sql<[{ billed: number }]>`select count(*)::int as billed from time_entries where workspace_id = ${w.ws.id} and billed`;
  expect(billed).toBe(0);
  const stale = await asOwner('GET', `/documents/${doc('ACME-2026-0001', 'pdf').id}/download`);
  expect([stale.status, stale.body.error.details.reason]).toEqual([409, 'document_voided']);
  const again = await asOwner('POST', '/billing/runs', { periodId: w.october.id });
  const second = await settled(again.body.id);
  expect(second.entryCount).toBe(preview.entryCount);
  const all = (await asOwner('GET', '/documents')).body.documents;
  const numbers = (code: string) => [...new Set(all.filter((d: any) => d.number.startsWith(code)).map((d: any) => d.number))].sort();
  expect(numbers('ACME-')).toEqual(['ACME-2026-0001', 'ACME-2026-0002']);
  expect(numbers('INI-')).toEqual(['INI-2026-0001', 'INI-2026-0002', 'INI-2026-0003', 'INI-2026-0004']);
  expect(all.filter((d: any) => d.runId === done.id).every((d: any) => d.voided)).toBe(true);
  // the void told each recipient (issue 23), and the replacement names the number it replaces: in its pdf and its email
  for (let i = 0; i < 300 && (await app.db.sql`select 1 from document_deliveries where workspace_id = ${w.ws.id} and state = 'pending'`).length > 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(smtp.messagesTo('ap@acme.test').map((m) => m.subject)).toEqual([
    'Timesheet ACME-2026-0001 — Acme Corp',
    'Timesheet ACME-2026-0001 voided — Acme Corp',
    'Timesheet ACME-2026-0002 — Acme Corp',
  ]);
  expect(smtp.messagesTo('ap@acme.test')[2]!.text).toContain('It replaces timesheet ACME-2026-0001, which was voided.');
  const replacementPdf = all.find((d: any) => d.number === 'ACME-2026-0002' && d.format === 'pdf');
  await writeFile(path.join(dir, 'replacement.pdf'), await download(replacementPdf));
  expect((await run('pdftotext', ['-layout', path.join(dir, 'replacement.pdf'), '-'])).stdout).toContain('ACME-2026-0001');

  // 8. redaction: the current documents quoting the ticket get a version 2 without the text
  expect((await app.call('POST', '/api/auth/reauth', { session: w.session, body: { password: w.owner.password } })).status).toBe(200);
  const redacted = await asOwner('POST', `/tickets/${w.tickets.paid.id}/redact`, { reason: 'Client asked us to remove it' });
  expect(redacted.body).toEqual({ ok: true, runs: 1 });
  let current: any[] = [];
  for (let i = 0; i < 100 && current.length < 3; i++) {
    current = (await asOwner('GET', `/documents?runId=${second.id}`)).body.documents.filter((d: any) => d.number === 'ACME-2026-0002' && d.version === 2);
    if (current.length < 3) await new Promise((r) => setTimeout(r, 100));
  }
  expect(current.map((d: any) => d.format).sort()).toEqual(['csv', 'html', 'pdf']);
  const oldHtml = (await asOwner('GET', `/documents?runId=${second.id}`)).body.documents.find(
    (d: any) => d.number === 'ACME-2026-0002' && d.version === 1 && d.format === 'html',
  );
  expect(oldHtml.redacted).toBe(true);
  const old = await asOwner('GET', `/documents/${oldHtml.id}/download`);
  expect([old.status, old.body.error.details.reason]).toEqual([409, 'document_redacted']);
  const fresh = (await download(current.find((d) => d.format === 'html'))).toString('utf8');
  expect(fresh).toContain('[redacted]');
  expect(fresh).not.toContain('Checkout redesign');
  expect(smtp.messagesTo('ap@acme.test')).toHaveLength(3); // the new version is not emailed again (the timesheet, the void notice, the replacement)
}, 240_000);
