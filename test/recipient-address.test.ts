import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allocateRun } from '../src/core/billing/allocate.ts';
import { deliverTimesheet } from '../src/core/documents/deliver.ts';
import { singleAddress } from '../src/core/mail/address.ts';
import { createMailer } from '../src/jobs/machinery/mail-from-config.ts';
import { createClient } from '../src/core/workspaces/create.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeWorkspace } from './helpers/factories.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.ts';
import { drainBillingJobs, jobCtx, makeBillingWorld } from './billing-world.ts';

/**
 * Issue 19, defect 11: a billing recipient's address was not checked: `a@x, b@y` mailed both, and
 * a value with a line break mailed the part after it. The address is one bare address by the
 * mailer's own parser where it is written (and by the database's check), and a delivery whose
 * address is not is `failed` without a message sent.
 */
const TWO = 'ap@acme.test, attacker@evil.test';
const BROKEN = 'ap@acme.test\r\nattacker@evil.test';

describe('singleAddress', () => {
  it.each(['ap@acme.test', 'first.last+tag@sub.example.co.uk'])('takes %s', (v) => expect(singleAddress(v)).toBe(v));
  it.each([TWO, BROKEN, 'ap@acme.test\nx', 'Accounts <ap@acme.test>', 'ap@acme.test;x@y.test', 'group: a@b.test;', ' ap@acme.test', '', 'no-at', 'a@b@c'])(
    'refuses %j',
    (v) => expect(singleAddress(v)).toBeNull(),
  );
});

describe('writers and sending', () => {
  let app: TestApp;
  let smtp: SmtpSink;
  beforeAll(async () => {
    app = await startTestApp();
    smtp = await startSmtpSink();
  });
  afterAll(async () => {
    await smtp?.close();
    await app?.close();
  });

  it('createClient refuses a recipient that is a list or carries a line break, and the database refuses it too', async () => {
    const ws = await makeWorkspace(app.db.sql);
    for (const email of [TWO, BROKEN]) {
      await expect(createClient(app.db.sql, { workspaceId: ws.id, name: 'Acme', code: 'ACME', recipients: [{ email }] })).rejects.toMatchObject({
        code: 'invalid',
        details: { reason: 'recipient_address' },
      });
    }
    const client = await createClient(app.db.sql, { workspaceId: ws.id, name: 'Acme', code: 'ACME', recipients: [{ email: 'ap@acme.test' }] });
    for (const email of [TWO, BROKEN]) {
      await expect(app.db.sql`insert into client_billing_recipients (client_id, email) values (${client}, ${email})`).rejects.toThrow(
        /client_billing_recipients_one_address/,
      );
    }
  });

  it('a delivery whose address is not exactly one address fails with a detail, and nothing is sent', async () => {
    const w = await makeBillingWorld(app);
    const res = await app.call('POST', `/api/w/${w.ws.slug}/billing/runs`, { session: w.session, body: { periodId: w.october.id } });
    const ctx = jobCtx(app.db.sql, { mailer: createMailer({ SMTP_URL: smtp.url }) });
    await allocateRun(ctx, { runId: res.body.id });
    await drainBillingJobs(app.db.sql, ctx);
    // rows written before the check (the database's check is NOT VALID for them) reach the delivery as they are
    const [bad, broken] = await app.db.sql<{ id: string }[]>`
      select dd.id from document_deliveries dd join timesheets s on s.id = dd.timesheet_id
      where s.run_id = ${res.body.id} and dd.state = 'pending' order by dd.id limit 2`;
    await app.db.sql`update document_deliveries set email = ${TWO} where id = ${bad!.id}`;
    await app.db.sql`update document_deliveries set email = ${BROKEN} where id = ${broken!.id}`;
    for (const d of [bad!, broken!]) await deliverTimesheet(ctx, { deliveryId: d.id });
    const rows = await app.db.sql`select state, detail from document_deliveries where id in (${bad!.id}, ${broken!.id})`;
    for (const r of rows) expect(r).toEqual({ state: 'failed', detail: 'The recipient address is not exactly one email address; not sent.' });
    expect(smtp.messagesTo('attacker@evil.test')).toEqual([]);
    expect(smtp.messages).toEqual([]);
  }, 60_000);
});
