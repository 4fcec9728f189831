import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadTimesheet } from '../src/core/documents/load-timesheet.ts';
import { createMailer } from '../src/jobs/machinery/mail-from-config.ts';
import { startWorker, type StartedWorker } from '../src/jobs/worker.ts';
import { makeLogger } from '../src/log.ts';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makeUser, type Person } from './helpers/factories.ts';
import { answerAt, startSmtpSink, type SmtpSink } from './helpers/smtp.ts';
import { makeBillingWorld, type BillingWorld } from './billing-world.ts';

/**
 * Review before sending, void notices and replacements (issue 23), through HTTP with a real
 * graphile-worker and a real SMTP server: a run of clients whose delivery is `review` stops at
 * `awaiting_approval` with nothing sent and nothing shown to the client's users; the approval
 * sends one email per recipient; a void after sending sends each of them one notice; a run voided
 * before its approval notifies no one; the next timesheet of the client and period names the
 * number it replaces, on the document and in its email. Deliveries carry their ids, which the
 * resend route takes.
 */
let app: TestApp;
let smtp: SmtpSink;
let worker: StartedWorker;
let w: BillingWorld;
let contact: Person;
let contactSession: SessionCookie;

beforeAll(async () => {
  app = await startTestApp();
  smtp = await startSmtpSink();
  const services = {
    sql: app.db.sql,
    now: () => new Date(),
    log: makeLogger('silent'),
    pdf: null,
    mailer: createMailer({ SMTP_URL: smtp.url }),
    mailFrom: 'billing@northwind.test',
  };
  worker = await startWorker(app.db.url, services, { concurrency: 4, pollInterval: 100 });
  w = await makeBillingWorld(app, { delivery: 'review' });
  const sql = app.db.sql;
  await sql`update workspaces set name = 'Northwind', mail_from_name = 'Northwind Billing', mail_reply_to = 'office@northwind.test' where id = ${w.ws.id}`;
  // a billing contact of Acme with a full login: the one client user who may download Acme's documents
  contact = await makeUser(sql, w.ws, { role: 'client_elevated', clientId: w.acme.id, name: 'Carla Contact' });
  await sql`insert into client_billing_recipients (client_id, identity_id, email, name) values (${w.acme.id}, ${contact.id}, ${contact.email}, 'Carla Contact')`;
  contactSession = await login(app, contact.email, contact.password);
}, 60_000);
afterAll(async () => {
  await worker?.stop();
  await smtp?.close();
  await app?.close();
});

const api = (p: string) => `/api/w/${w.ws.slug}${p}`;
const asOwner = (method: string, p: string, body?: unknown) => app.call(method, api(p), { session: w.session, body });
const asContact = (method: string, p: string) => app.call(method, api(p), { session: contactSession });
const acmeRecipients = () => ['ap@acme.test', 'cfo@acme.test', contact.email];

/** Polls the run until it reaches one of `states` (a generous bound only stops a hang). */
async function runAt(runId: string, states: string[]) {
  for (let i = 0; i < 600; i++) {
    const run = (await asOwner('GET', `/billing/runs/${runId}`)).body;
    if (states.includes(run.status)) return run;
    if (run.status === 'failed') throw new Error(`the run failed: ${run.error}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`run ${runId} never reached ${states.join(' or ')}`);
}

/** Waits until no delivery of the workspace is pending, and answers them all. */
async function deliveriesSettled() {
  for (let i = 0; i < 600; i++) {
    const [row] = await app.db.sql<{ n: number }[]>`select count(*)::int as n from document_deliveries where workspace_id = ${w.ws.id} and state = 'pending'`;
    if (row!.n === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('deliveries still pending');
}

const subjects = (address: string) => smtp.messagesTo(address).map((m) => m.subject);

it('holds a review run until approval, sends once per recipient after it, notifies on void, and names the replaced number', async () => {
  const sql = app.db.sql;
  // a client created now starts at review, and PATCH /clients switches it (shown on the client)
  expect((await asOwner('GET', `/clients/${w.acme.id}`)).body.delivery).toBe('review');

  // 1. the run renders and stops: nothing sent, no delivery made, the documents hidden from the client
  smtp.program(answerAt('rcpt', { code: 550, text: 'mailbox unavailable' }, { times: 1, to: 'cfo@acme.test' }));
  const started = await asOwner('POST', '/billing/runs', { periodId: w.october.id });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const held = await runAt(started.body.id, ['awaiting_approval', 'delivering', 'completed']);
  expect(held.status).toBe('awaiting_approval');
  expect(held.approvedAt).toBeNull();
  expect(smtp.received).toHaveLength(0);
  expect((await sql`select 1 from document_deliveries where workspace_id = ${w.ws.id}`).length).toBe(0);
  const owners = (await asOwner('GET', `/documents?runId=${held.id}`)).body;
  expect(owners.documents.length).toBeGreaterThan(0); // the operators read every document
  const acmeHtml = owners.documents.find((d: any) => d.number === 'ACME-2026-0001' && d.format === 'html');
  expect((await asOwner('GET', `/documents/${acmeHtml.id}/download`)).status).toBe(200);
  const draft = await asContact('GET', '/documents');
  expect(draft.status).toBe(200);
  expect(draft.body.documents).toEqual([]);
  const refused = await asContact('GET', `/documents/${acmeHtml.id}/download`);
  expect([refused.status, refused.body.error.details.reason]).toEqual([403, 'document_forbidden']);

  // 2. approval releases the deliveries: exactly one email per recipient and timesheet
  const approved = await asOwner('POST', `/billing/runs/${held.id}/approve`, {});
  expect(approved.status, JSON.stringify(approved.body)).toBe(200);
  expect(approved.body.approvedAt).toBeTruthy();
  expect((await asOwner('POST', `/billing/runs/${held.id}/approve`, {})).body.error.details).toMatchObject({ reason: 'run_not_awaiting_approval' });
  await runAt(held.id, ['completed']);
  for (const address of ['ap@acme.test', contact.email]) expect(subjects(address)).toEqual(['Timesheet ACME-2026-0001 — Acme Corp']);
  expect(smtp.messagesTo('cfo@acme.test')).toHaveLength(0); // refused once, 550: failed
  expect(smtp.messagesTo('buchhaltung@initech.test')).toHaveLength(2);
  const first = smtp.messagesTo('ap@acme.test')[0]!;
  expect(first.headers.get('from')).toMatchObject({ text: '"Northwind Billing" <billing@northwind.test>' });
  expect(String((first.headers.get('reply-to') as { text: string }).text)).toContain('office@northwind.test');
  expect((await asContact('GET', '/documents')).body.documents.map((d: any) => d.number)).toContain('ACME-2026-0001');
  expect((await asContact('GET', `/documents/${acmeHtml.id}/download`)).status).toBe(200);

  // 3. each delivery carries its id, which the resend route takes
  const listed = (await asOwner('GET', `/documents?runId=${held.id}`)).body.documents.find((d: any) => d.id === acmeHtml.id);
  expect(listed.deliveries.map((d: any) => [d.email, d.kind, d.state]).sort()).toEqual(
    [
      ['ap@acme.test', 'timesheet', 'sent'],
      ['cfo@acme.test', 'timesheet', 'failed'],
      [contact.email, 'timesheet', 'sent'],
    ].sort(),
  );
  for (const d of listed.deliveries) expect(d.id).toMatch(/^[0-9a-f-]{36}$/);
  const failed = listed.deliveries.find((d: any) => d.state === 'failed');
  const resent = await asOwner('POST', `/documents/${acmeHtml.id}/deliveries/${failed.id}/resend`, {});
  expect(resent.status, JSON.stringify(resent.body)).toBe(202);
  expect(resent.body).toMatchObject({ id: failed.id, kind: 'timesheet', state: 'pending' });
  await runAt(held.id, ['completed']);
  expect(subjects('cfo@acme.test')).toEqual(['Timesheet ACME-2026-0001 — Acme Corp']);

  // 4. voided after sending: each recipient who received a timesheet gets one notice naming its number
  const voided = await asOwner('POST', `/billing/runs/${held.id}/void`, { reason: 'wrong rates' });
  expect(voided.status).toBe(200);
  await deliveriesSettled();
  for (const address of acmeRecipients()) {
    expect(subjects(address)).toEqual(['Timesheet ACME-2026-0001 — Acme Corp', 'Timesheet ACME-2026-0001 voided — Acme Corp']);
  }
  const notice = smtp.messagesTo('ap@acme.test')[1]!;
  expect(notice.text).toContain('ACME-2026-0001');
  expect(notice.attachments).toHaveLength(0);
  expect(
    subjects('buchhaltung@initech.test')
      .filter((s) => s?.includes('storniert'))
      .sort(),
  ).toEqual(['Stundennachweis INI-2026-0001 storniert — Initech GmbH', 'Stundennachweis INI-2026-0002 storniert — Initech GmbH']);
  const notices = (await asOwner('GET', `/documents?runId=${held.id}`)).body.documents
    .find((d: any) => d.id === acmeHtml.id)
    .deliveries.filter((d: any) => d.kind === 'void_notice');
  expect(notices.map((d: any) => [d.email, d.state]).sort()).toEqual(
    acmeRecipients()
      .map((e) => [e, 'sent'])
      .sort(),
  );

  // 5. a run voided before its approval sent nothing, so it notifies no one
  const mailsBefore = smtp.received.length;
  const second = (await asOwner('POST', '/billing/runs', { periodId: w.october.id })).body;
  await runAt(second.id, ['awaiting_approval']);
  expect((await asOwner('POST', `/billing/runs/${second.id}/void`, { reason: 'not yet' })).status).toBe(200);
  await deliveriesSettled();
  expect(smtp.received.length).toBe(mailsBefore);

  // 6. the next timesheet names the number the client received and that was voided, on the document and in the email
  const third = (await asOwner('POST', '/billing/runs', { periodId: w.october.id })).body;
  await runAt(third.id, ['awaiting_approval']);
  const [sheet] = await sql<{ id: string; number: string }[]>`
    select id, number from timesheets where run_id = ${third.id} and client_id = ${w.acme.id}`;
  expect(sheet!.number).toBe('ACME-2026-0003');
  expect((await loadTimesheet(sql, sheet!.id))!.replacesNumber).toBe('ACME-2026-0001');
  const replacement = (await asOwner('GET', `/documents?runId=${third.id}`)).body.documents.find(
    (d: any) => d.number === 'ACME-2026-0003' && d.format === 'html',
  );
  expect(String((await asOwner('GET', `/documents/${replacement.id}/download`)).body)).toContain('ACME-2026-0001');
  expect((await asOwner('POST', `/billing/runs/${third.id}/approve`, {})).status).toBe(200);
  await runAt(third.id, ['completed']);
  const replacementMail = smtp.messagesTo('ap@acme.test').find((m) => m.subject?.includes('ACME-2026-0003'))!;
  expect(replacementMail.text).toContain('It replaces timesheet ACME-2026-0001, which was voided.');
  for (const address of acmeRecipients()) expect(subjects(address).filter((s) => s?.includes('ACME-2026-0003'))).toHaveLength(1);
}, 120_000);
