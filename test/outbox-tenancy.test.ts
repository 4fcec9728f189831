import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { allocateRun } from '../src/core/billing/allocate.ts';
import { deliverTimesheet } from '../src/core/documents/deliver.ts';
import { createMailer } from '../src/jobs/machinery/mail-from-config.ts';
import { outgoingWorkspace } from '../src/core/mail/outgoing.ts';
import { startOutbox, type Outbox } from '../src/jobs/machinery/outbox-server.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { drainBillingJobs, jobCtx, makeBillingWorld, type BillingWorld } from './billing-world.ts';

/**
 * Issue 19, defect 6: without SMTP_URL, /ops/outbox showed every workspace's mail to the owner or
 * admin of any workspace. The local catcher files each message under the workspace that sent it
 * (the one whose delivery recorded its Message-ID), and each workspace's page reads its own only.
 */
let app: TestApp;
let outbox: Outbox;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'wt-outbox-tenancy-'));
  app = await startTestApp({ env: { OUTBOX_DIR: dir } });
  outbox = await startOutbox({ dir, workspaceOf: (id) => outgoingWorkspace(app.db.sql, id) });
}, 60_000);
afterAll(async () => {
  await outbox?.close();
  await app?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Bills October and sends every delivery of the run to the local catcher; the recipients' addresses, sorted. */
async function billAndSend(w: BillingWorld): Promise<string[]> {
  const res = await app.call('POST', `/api/w/${w.ws.slug}/billing/runs`, { session: w.session, body: { periodId: w.october.id } });
  expect(res.status).toBe(201);
  const ctx = jobCtx(app.db.sql, { mailer: createMailer({ SMTP_URL: outbox.url }) });
  await allocateRun(ctx, { runId: res.body.id });
  await drainBillingJobs(app.db.sql, ctx);
  const pending = await app.db.sql<{ id: string; email: string }[]>`
    select dd.id, dd.email from document_deliveries dd join timesheets s on s.id = dd.timesheet_id where s.run_id = ${res.body.id} and dd.state = 'pending'`;
  for (const d of pending) await deliverTimesheet(ctx, { deliveryId: d.id });
  const states = await app.db.sql`select state from document_deliveries where id = any(${pending.map((d) => d.id)}::uuid[])`;
  expect(states.every((s) => s.state === 'sent')).toBe(true);
  return pending.map((d) => d.email).sort();
}

async function outboxPage(w: BillingWorld): Promise<string> {
  const res = await fetch(`${app.base}/ops/outbox`, { headers: { cookie: w.session.cookie } });
  expect(res.status).toBe(200);
  return res.text();
}

it('two workspaces each deliver: each owner sees its own messages in /ops/outbox, never the other’s', async () => {
  const a = await makeBillingWorld(app);
  const b = await makeBillingWorld(app);
  // B's recipients have addresses of their own, so a page tells the two apart
  await app.db.sql`
    update client_billing_recipients set email = replace(email, '.test', '.b.test')
    where client_id in (${b.acme.id}, ${b.initech.id})`;
  const sentA = await billAndSend(a);
  const sentB = await billAndSend(b);
  expect(sentB.every((e) => e.endsWith('.b.test'))).toBe(true);

  const pageA = await outboxPage(a);
  const pageB = await outboxPage(b);
  for (const e of sentA) expect(pageA).toContain(e);
  for (const e of sentB) expect(pageB).toContain(e);
  expect(pageA).not.toContain('.b.test');
  expect(pageB).not.toMatch(/@(acme|initech)\.test/);
  const rows = (html: string) => (html.match(/<tr>/g) ?? []).length - 1; // the header row
  expect(rows(pageA)).toBe(sentA.length);
  expect(rows(pageB)).toBe(sentB.length);

  // on disk: one folder per workspace, nothing left beside them
  expect((await readdir(dir)).sort()).toEqual([a.ws.id, b.ws.id].sort());
  expect(await readdir(path.join(dir, a.ws.id))).toHaveLength(sentA.length);
}, 120_000);

it('a message no workspace sent is kept in the outbox folder itself and shown to no workspace', async () => {
  const c = await makeBillingWorld(app);
  const result = await createMailer({ SMTP_URL: outbox.url }).send({
    from: 'someone@else.test',
    to: 'victim@else.test',
    subject: 'Not ours',
    text: 'hello',
    messageId: `<forged-${Date.now()}@else.test>`,
    attachments: [],
  });
  expect(result.outcome).toBe('accepted');
  expect((await readdir(dir)).filter((f) => f.endsWith('.eml'))).toHaveLength(1);
  expect(await outboxPage(c)).not.toContain('victim@else.test');
}, 60_000);
