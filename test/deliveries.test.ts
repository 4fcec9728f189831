import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { timesheetRendered } from '../src/core/billing/progress.ts';
import { deliverTimesheet, deliveryAttemptFailed } from '../src/core/documents/deliver.ts';
import { deliverAndNotify } from '../src/core/documents/deliver-task.ts';
import { settleAbandonedDeliveries } from '../src/core/documents/abandoned-deliveries.ts';
import { deliverJob } from '../src/core/jobs/catalog.ts';
import type { JobCtx } from '../src/core/jobs/ctx.ts';
import { SmtpMailer } from '../src/jobs/machinery/smtp-mailer.ts';
import type { Db } from '../src/db/connect.ts';
import { makeLogger } from '../src/log.ts';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makeBillingRun, makePeriod, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { answerAt, startSmtpSink, type SmtpSink } from './helpers/smtp.ts';

/**
 * The `documents:deliver` job and the operator's resend, against a real SMTP server: one email
 * per recipient whatever fails (4xx, 5xx, a connection lost after DATA, a crash at any step of
 * the job), each outcome recorded with the server's reply, and the run completed once every
 * delivery is settled.
 */
let app: TestApp;
let smtp: SmtpSink;
beforeAll(async () => {
  [app, smtp] = await Promise.all([startTestApp(), startSmtpSink()]);
});
afterAll(async () => {
  await smtp.close();
  await app.close();
});
beforeEach(() => smtp.program(null));

const MAIL_FROM = 'Agentur Nord <billing@agency.test>';

function jobCtx(opts: { attempt?: number; checkpoint?: (step: string) => void } = {}): JobCtx {
  return {
    sql: app.db.sql,
    now: () => new Date(),
    log: makeLogger('silent'),
    pdf: null,
    mailer: new SmtpMailer(smtp.url),
    mailFrom: MAIL_FROM,
    checkpoint: opts.checkpoint,
    attempt: opts.attempt === undefined ? undefined : { number: opts.attempt, max: 5 },
  };
}

const crashAt = (at: string) => (step: string) => {
  if (step === at) throw new Error(`crash at ${step}`);
};

interface World {
  ws: Workspace;
  admin: Person;
  member: Person;
  runId: string;
  timesheetId: string;
  number: string;
  documents: { html: string; csv: string };
  content: { html: Buffer; csv: Buffer };
  /** The deliveries by address (the opted-out and address-less recipients too). */
  delivery: Record<'ap' | 'cfo' | 'optedOut' | 'noAddress', string>;
  /** Addresses of the two recipients who get the email. */
  ap: string;
  cfo: string;
}

let seq = 0;

/**
 * A German client with four billing recipients (two who get the email, one who opted out, one
 * without an address), a run of a closed period, and one timesheet rendered in html and csv: its
 * deliveries made as the render job makes them (timesheetRendered), which moves the run to `delivering`.
 */
async function makeWorld(): Promise<World> {
  const sql = app.db.sql;
  const n = ++seq;
  const ws = await makeWorkspace(sql);
  await sql`update workspaces set name = 'Agentur Nord' where id = ${ws.id}`;
  const admin = await makeUser(sql, ws, { role: 'admin' });
  const member = await makeUser(sql, ws, { role: 'member' });
  const [client] = await sql<{ id: string }[]>`
    insert into clients (workspace_id, name, code, locale) values (${ws.id}, 'Initech GmbH', 'INI', 'de-DE') returning id`;
  const ap = `ap-${n}@initech.test`;
  const cfo = `cfo-${n}@initech.test`;
  const recipient = async (email: string | null, optedOut = false) => {
    const [r] = await sql<{ id: string }[]>`
      insert into client_billing_recipients (client_id, email, name, opted_out) values (${client!.id}, ${email}, ${email}, ${optedOut}) returning id`;
    return r!.id;
  };
  const recipients = {
    ap: await recipient(ap),
    cfo: await recipient(cfo),
    optedOut: await recipient(`old-${n}@initech.test`, true),
    noAddress: await recipient(null),
  };
  const period = await makePeriod(sql, ws, { start: '2026-10-01', end: '2026-10-31', closed: true });
  const run = await makeBillingRun(sql, ws, { periodId: period.id, status: 'rendering' });
  const number = 'INI-2026-0001';
  const [sheet] = await sql<{ id: string }[]>`
    insert into timesheets (workspace_id, run_id, client_id, scope, number, version, formats)
    values (${ws.id}, ${run.id}, ${client!.id}, 'combined', ${number}, 1, array['html', 'csv']) returning id`;
  const content = {
    html: Buffer.from(`<!doctype html><title>${number}</title><p>Stundennachweis ${number}: 1,50 Std.</p>\n.\n`),
    csv: Buffer.from(`number,client,hours\r\n${number},Initech GmbH,1.50\r\n`),
  };
  const doc = async (format: 'html' | 'csv') => {
    const [d] = await sql<{ id: string }[]>`
      insert into documents (workspace_id, run_id, client_id, scope, number, period_start, format, version, locale, checksum, bytes, content, timesheet_id)
      values (${ws.id}, ${run.id}, ${client!.id}, 'combined', ${number}, '2026-10-01', ${format}, 1, 'de-DE', ${`sha-${format}`},
              ${content[format].length}, ${content[format]}, ${sheet!.id})
      returning id`;
    return d!.id;
  };
  const documents = { html: await doc('html'), csv: await doc('csv') };
  await timesheetRendered(sql, sheet!.id, new Date());
  const rows = await sql<{ id: string; recipientId: string }[]>`
    select id, recipient_id as "recipientId" from document_deliveries where timesheet_id = ${sheet!.id}`;
  const byRecipient = (id: string) => rows.find((r) => r.recipientId === id)!.id;
  return {
    ws,
    admin,
    member,
    runId: run.id,
    timesheetId: sheet!.id,
    number,
    documents,
    content,
    delivery: {
      ap: byRecipient(recipients.ap),
      cfo: byRecipient(recipients.cfo),
      optedOut: byRecipient(recipients.optedOut),
      noAddress: byRecipient(recipients.noAddress),
    },
    ap,
    cfo,
  };
}

interface DeliveryRow {
  state: string;
  detail: string | null;
  attempts: number;
  messageId: string | null;
  sending: boolean;
  attemptedAt: Date | null;
}

async function delivery(id: string): Promise<DeliveryRow> {
  const [d] = await app.db.sql<DeliveryRow[]>`
    select state, detail, attempts, message_id as "messageId", sending_at is not null as sending, attempted_at as "attemptedAt"
    from document_deliveries where id = ${id}`;
  return d!;
}

const runStatus = async (w: World) => (await app.db.sql<{ status: string }[]>`select status from billing_runs where id = ${w.runId}`)[0]!.status;

/** The queued delivery jobs of the world's timesheet (graphile-worker's table), by the delivery their key names. */
async function queuedJobs(sql: Db, w: World): Promise<{ id: string; deliveryId: string }[]> {
  return sql<{ id: string; deliveryId: string }[]>`
    select j.id, dd.id as "deliveryId" from graphile_worker._private_jobs j
    join graphile_worker._private_tasks t on t.id = j.task_id
    join document_deliveries dd on j.key = 'documents:deliver:' || dd.id
    where t.identifier = 'documents:deliver' and dd.timesheet_id = ${w.timesheetId}
    order by j.id`;
}

/**
 * Runs every queued delivery job of the world once, as the worker would (a job that returns is
 * deleted; one that throws stays queued for its retry). Returns the errors thrown.
 */
async function runQueued(w: World, ctx: JobCtx = jobCtx({ attempt: 1 })): Promise<string[]> {
  const errors: string[] = [];
  for (const job of await queuedJobs(app.db.sql, w)) {
    try {
      await deliverTimesheet(ctx, { deliveryId: job.deliveryId });
      await app.db.sql`delete from graphile_worker._private_jobs where id = ${job.id}`;
    } catch (err) {
      errors.push((err as Error).message);
    }
  }
  return errors;
}

describe('a delivery', () => {
  it("shows the workspace's sender name (its settings, issue 22) with MAIL_FROM's address", async () => {
    const w = await makeWorld();
    await app.db.sql`update workspaces set mail_from_name = 'Nord "Billing"' where id = ${w.ws.id}`;
    expect(await runQueued(w)).toEqual([]);
    const [m] = smtp.messagesTo(w.ap);
    expect(m!.headers.get('from')).toMatchObject({ value: [{ name: 'Nord "Billing"', address: 'billing@agency.test' }] });
    expect(m!.envelope.from).toBe('billing@agency.test');
  });

  it("shows the workspace's name when its settings name no sender (issue 23), with MAIL_FROM's address", async () => {
    const w = await makeWorld();
    await app.db.sql`update workspaces set name = 'Nordlicht Agentur', mail_from_name = null where id = ${w.ws.id}`;
    expect(await runQueued(w)).toEqual([]);
    const [m] = smtp.messagesTo(w.ap);
    expect(m!.headers.get('from')).toMatchObject({ value: [{ name: 'Nordlicht Agentur', address: 'billing@agency.test' }] });
  });

  it('sends one email per recipient with the documents attached, skips the rest, and completes the run', async () => {
    const w = await makeWorld();
    expect(await runStatus(w)).toBe('delivering');
    expect(await delivery(w.delivery.optedOut)).toMatchObject({ state: 'skipped', detail: 'The recipient opted out of timesheet emails.' });
    expect(await delivery(w.delivery.noAddress)).toMatchObject({ state: 'skipped', detail: 'The recipient has no email address.' });
    expect((await queuedJobs(app.db.sql, w)).map((j) => j.deliveryId).sort()).toEqual([w.delivery.ap, w.delivery.cfo].sort());

    expect(await runQueued(w)).toEqual([]);
    for (const [id, address] of [
      [w.delivery.ap, w.ap],
      [w.delivery.cfo, w.cfo],
    ] as const) {
      const row = await delivery(id);
      expect(row).toMatchObject({ state: 'sent', attempts: 1, sending: false });
      expect(row.detail).toMatch(/^250 /);
      expect(row.attemptedAt).toBeInstanceOf(Date);
      expect(row.messageId).toMatch(/^<[0-9a-f-]{36}@agency\.test>$/);
      const [m, ...more] = smtp.messagesTo(address);
      expect(more).toEqual([]);
      expect(m!.messageId).toBe(row.messageId);
      expect(m!.envelope.from).toBe('billing@agency.test');
      expect(m!.to).toEqual([address]);
      expect(m!.headers.get('auto-submitted')).toBe('auto-generated');
      expect(m!.subject).toBe('Stundennachweis INI-2026-0001 — Initech GmbH');
      expect(m!.text).toContain('anbei erhalten Sie den Stundennachweis INI-2026-0001 für Initech GmbH');
      expect(m!.text).toContain('Agentur Nord');
      expect(m!.attachments.map((a) => a.filename)).toEqual(['INI-2026-0001.html', 'INI-2026-0001.csv']);
      expect(Buffer.compare(m!.attachments[0]!.content, w.content.html)).toBe(0);
      expect(Buffer.compare(m!.attachments[1]!.content, w.content.csv)).toBe(0);
    }
    expect(smtp.messagesTo(`old-${seq}@initech.test`)).toEqual([]);
    expect(await runStatus(w)).toBe('completed');

    // a duplicate of the job (a retry after the worker lost track of it) sends nothing
    const before = smtp.received.length;
    await deliverTimesheet(jobCtx({ attempt: 2 }), { deliveryId: w.delivery.ap });
    expect(smtp.received.length).toBe(before);
  });

  it('keeps the run delivering until the last delivery is settled', async () => {
    const w = await makeWorld();
    await deliverTimesheet(jobCtx({ attempt: 1 }), { deliveryId: w.delivery.ap });
    expect(await runStatus(w)).toBe('delivering');
    await deliverTimesheet(jobCtx({ attempt: 1 }), { deliveryId: w.delivery.cfo });
    expect(await runStatus(w)).toBe('completed');
  });

  it('skips a recipient who opted out after the delivery was made, and every delivery of a voided run', async () => {
    const w = await makeWorld();
    await app.db.sql`update client_billing_recipients set opted_out = true where email = ${w.ap}`;
    await deliverTimesheet(jobCtx(), { deliveryId: w.delivery.ap });
    expect(await delivery(w.delivery.ap)).toMatchObject({ state: 'skipped', detail: 'The recipient opted out of timesheet emails.', attempts: 0 });

    await app.db.sql`update billing_runs set status = 'voided', voided_at = now() where id = ${w.runId}`;
    await deliverTimesheet(jobCtx(), { deliveryId: w.delivery.cfo });
    expect(await delivery(w.delivery.cfo)).toMatchObject({ state: 'skipped', detail: 'The billing run was voided before sending.', attempts: 0 });
    expect(smtp.messagesTo(w.ap)).toEqual([]);
    expect(smtp.messagesTo(w.cfo)).toEqual([]);
    expect(await runStatus(w)).toBe('voided');
  });

  it('refuses a payload that is not a delivery id', async () => {
    await expect(deliverTimesheet(jobCtx(), { deliveryId: 'nope' })).rejects.toThrow();
    // the worker checks the payload by the job's declaration before the operation runs (test/job-catalog.test.ts)
    expect(deliverJob.payload.safeParse(null).success).toBe(false);
    expect(deliverJob.payload.safeParse({ workspaceId: '00000000-0000-4000-8000-000000000000', deliveryId: 'nope' }).success).toBe(false);
  });
});

describe('SMTP outcomes', () => {
  it('4xx then success: pending with the reply after the first attempt, sent after the retry, one email with one Message-ID', async () => {
    const w = await makeWorld();
    smtp.program(answerAt('data', { code: 451, text: '4.3.0 Mailbox temporarily unavailable' }, { times: 1, to: w.ap }));
    await expect(deliverTimesheet(jobCtx({ attempt: 1 }), { deliveryId: w.delivery.ap })).rejects.toThrow(/451 4\.3\.0/);
    const first = await delivery(w.delivery.ap);
    expect(first).toMatchObject({ state: 'pending', detail: '451 4.3.0 Mailbox temporarily unavailable', attempts: 1, sending: false });

    await deliverTimesheet(jobCtx({ attempt: 2 }), { deliveryId: w.delivery.ap });
    const second = await delivery(w.delivery.ap);
    expect(second).toMatchObject({ state: 'sent', attempts: 2, messageId: first.messageId });
    expect(smtp.messagesTo(w.ap)).toHaveLength(1);
    // the refused attempt carried the same Message-ID: a receiver that had kept it would see a duplicate, not a new email
    expect(smtp.received.filter((m) => m.envelope.to.includes(w.ap)).map((m) => m.messageId)).toEqual([first.messageId, first.messageId]);
  });

  it('4xx (or a refused connection) on the last attempt: failed with the reply', async () => {
    const w = await makeWorld();
    smtp.program(answerAt('rcpt', { code: 450, text: '4.2.1 try later' }, { to: w.ap }));
    await deliverTimesheet(jobCtx({ attempt: 5 }), { deliveryId: w.delivery.ap });
    expect(await delivery(w.delivery.ap)).toMatchObject({ state: 'failed', detail: '450 4.2.1 try later', sending: false });

    const refused: JobCtx = { ...jobCtx({ attempt: 5 }), mailer: new SmtpMailer('smtp://127.0.0.1:1') };
    await deliverTimesheet(refused, { deliveryId: w.delivery.cfo });
    expect(await delivery(w.delivery.cfo)).toMatchObject({ state: 'failed' });
    expect((await delivery(w.delivery.cfo)).detail).toContain('ECONNREFUSED');
    expect(await runStatus(w)).toBe('completed');
  });

  it('5xx: failed at once with the reply line, no retry', async () => {
    const w = await makeWorld();
    smtp.program(answerAt('rcpt', { code: 550, text: '5.1.1 mailbox unavailable' }, { to: w.ap }));
    await deliverTimesheet(jobCtx({ attempt: 1 }), { deliveryId: w.delivery.ap });
    expect(await delivery(w.delivery.ap)).toMatchObject({ state: 'failed', detail: '550 5.1.1 mailbox unavailable', attempts: 1, sending: false });
    expect(smtp.messagesTo(w.ap)).toEqual([]);
  });

  it('connection dropped after DATA: unknown, and the job run again sends nothing', async () => {
    const w = await makeWorld();
    smtp.program(answerAt('data', 'drop', { to: w.ap }));
    await deliverTimesheet(jobCtx({ attempt: 1 }), { deliveryId: w.delivery.ap });
    expect(await delivery(w.delivery.ap)).toMatchObject({ state: 'unknown', detail: 'Connection closed unexpectedly', sending: false });
    const received = smtp.received.filter((m) => m.envelope.to.includes(w.ap)).length;
    expect(received).toBe(1);

    smtp.program(null);
    await deliverTimesheet(jobCtx({ attempt: 2 }), { deliveryId: w.delivery.ap });
    expect(smtp.received.filter((m) => m.envelope.to.includes(w.ap))).toHaveLength(received);
    expect(await delivery(w.delivery.ap)).toMatchObject({ state: 'unknown', attempts: 1 });
  });

  it('after a redaction the email carries the new version of the timesheet, and waits while it renders', async () => {
    const w = await makeWorld();
    const sql = app.db.sql;
    const [v2] = await sql<{ id: string }[]>`
      insert into timesheets (workspace_id, run_id, client_id, scope, number, version, formats, supersedes_id)
      select workspace_id, run_id, client_id, scope, number, 2, formats, id from timesheets where id = ${w.timesheetId} returning id`;
    await sql`update documents set redacted = true where timesheet_id = ${w.timesheetId}`;
    // not rendered yet: the job waits (throws for a retry) without touching the delivery
    await expect(deliverTimesheet(jobCtx({ attempt: 1 }), { deliveryId: w.delivery.ap })).rejects.toThrow(/not rendered yet/);
    expect(await delivery(w.delivery.ap)).toMatchObject({ state: 'pending', attempts: 0, messageId: null });

    const redacted = { html: Buffer.from('<p>[redacted]</p>'), csv: Buffer.from('number,hours\r\nINI-2026-0001,1.50\r\n') };
    for (const format of ['html', 'csv'] as const) {
      await sql`
        insert into documents (workspace_id, run_id, client_id, scope, number, period_start, format, version, locale, checksum, bytes, content, timesheet_id)
        select workspace_id, run_id, client_id, scope, number, period_start, format, 2, locale, checksum || '-v2', ${redacted[format].length}, ${redacted[format]}, ${v2!.id}
        from documents where timesheet_id = ${w.timesheetId} and format = ${format}`;
    }
    await deliverTimesheet(jobCtx({ attempt: 2 }), { deliveryId: w.delivery.ap });
    const [m] = smtp.messagesTo(w.ap);
    expect(m!.attachments.map((a) => a.content.toString())).toEqual([redacted.html.toString(), redacted.csv.toString()]);

    // a version that never gets rendered: the last attempt gives up
    await sql`insert into timesheets (workspace_id, run_id, client_id, scope, number, version, formats, supersedes_id)
              select workspace_id, run_id, client_id, scope, number, 3, formats, id from timesheets where id = ${v2!.id}`;
    await deliverTimesheet(jobCtx({ attempt: 5 }), { deliveryId: w.delivery.cfo });
    expect(await delivery(w.delivery.cfo)).toMatchObject({
      state: 'failed',
      detail: 'The timesheet was superseded and its new version was not rendered in time.',
    });
    expect(smtp.messagesTo(w.cfo)).toEqual([]);
  });
});

/**
 * Kill and retry: the job aborted at each of its steps (a checkpoint that throws, as a crash
 * there would: an open transaction rolls back), then run again, twice. Before the attempt is
 * marked the retry sends normally; once the message may have left (after the send, before the
 * outcome is committed) the retry finds the mark and records `unknown` rather than send twice.
 */
describe('kill and retry', () => {
  const expected: Record<string, 'sent' | 'unknown'> = {
    'deliver:loaded': 'sent',
    'deliver:claimed': 'sent',
    'deliver:sent': 'unknown',
    'deliver:recorded': 'unknown',
  };
  it.each(Object.entries(expected))('aborted at %s: exactly one email per recipient, the delivery %s', async (step, state) => {
    const w = await makeWorld();
    let reached = 0;
    const crash = (s: string) => {
      if (s === step) reached++;
      crashAt(step)(s);
    };
    expect(await runQueued(w, jobCtx({ attempt: 1, checkpoint: crash }))).toEqual([`crash at ${step}`, `crash at ${step}`]);
    expect(reached).toBe(2);
    expect(await runQueued(w, jobCtx({ attempt: 2 }))).toEqual([]);
    for (const id of [w.delivery.ap, w.delivery.cfo]) await deliverTimesheet(jobCtx({ attempt: 3 }), { deliveryId: id });

    for (const [id, address] of [
      [w.delivery.ap, w.ap],
      [w.delivery.cfo, w.cfo],
    ] as const) {
      expect(
        smtp.received.filter((m) => m.envelope.to.includes(address)),
        address,
      ).toHaveLength(1);
      expect(smtp.messagesTo(address)).toHaveLength(1);
      const row = await delivery(id);
      expect(row.state).toBe(state);
      expect(row.messageId).toBe(smtp.messagesTo(address)[0]!.messageId);
      if (state === 'unknown') expect(row.detail).toBe('The previous attempt stopped while sending; not re-sent automatically.');
    }
    expect(await runStatus(w)).toBe('completed');
    expect(await queuedJobs(app.db.sql, w)).toEqual([]);
  });
});

/**
 * An attempt that stopped without recording its outcome (its worker killed, or presumed dead and
 * its job taken over): the SMTP step it had committed decides. Before `data` the server cannot
 * have the message: the next attempt sends it, with the same Message-ID; from `data` on it may:
 * `unknown`. The stopped attempt is held at its step (a mailer that waits there), another attempt
 * runs, and then the held one is let go, as a worker that was only slow would.
 */
describe('an attempt stopped mid-send', () => {
  it.each([
    ['connected', 'sent'],
    ['envelope', 'sent'],
    ['data', 'unknown'],
  ] as const)('held after recording %s: the next attempt leaves it %s, and the server gets exactly one message', async (held, state) => {
    const w = await makeWorld();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const real = new SmtpMailer(smtp.url);
    const holding: JobCtx = {
      ...jobCtx({ attempt: 1 }),
      mailer: {
        send: (mail, onStep) =>
          real.send(mail, async (step) => {
            await onStep!(step);
            if (step === held) await gate;
          }),
      },
    };
    const first = deliverTimesheet(holding, { deliveryId: w.delivery.ap });
    const sql = app.db.sql;
    for (let i = 0; (await sql`select 1 from document_deliveries where id = ${w.delivery.ap} and smtp_step = ${held}`).length === 0; i++) {
      if (i > 200) throw new Error(`the first attempt never reached ${held}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const stopped = await delivery(w.delivery.ap);
    expect(stopped).toMatchObject({ state: 'pending', sending: true, attempts: 1 });

    await deliverTimesheet(jobCtx({ attempt: 2 }), { deliveryId: w.delivery.ap });
    const after = await delivery(w.delivery.ap);
    expect(after).toMatchObject({ state, messageId: stopped.messageId, sending: false });
    if (state === 'unknown') expect(after.detail).toBe('The previous attempt stopped while sending; not re-sent automatically.');

    release();
    await first; // the held attempt finds it no longer holds the delivery: it sends nothing more and records nothing
    const received = smtp.received.filter((m) => m.envelope.to.includes(w.ap));
    expect(received.map((m) => m.messageId)).toEqual([stopped.messageId]);
    expect(smtp.messagesTo(w.ap)).toHaveLength(1);
    expect(await delivery(w.delivery.ap)).toMatchObject({ state, detail: after.detail });
  });
});

/** Makes the delivery's job look as a worker killed during its last attempt leaves it (once the liveness sweep unlocked it). */
async function exhaustJob(deliveryId: string, opts: { locked?: boolean; attempts?: number } = {}): Promise<void> {
  await app.db.sql`
    update graphile_worker._private_jobs set attempts = ${opts.attempts ?? 5}, max_attempts = 5,
           locked_at = ${opts.locked ? new Date() : null}, locked_by = ${opts.locked ? 'a-worker' : null}
    where key = ${`documents:deliver:${deliveryId}`}`;
}

/** Marks the delivery as an attempt leaves it that reached `step` and was then killed. */
async function stoppedAt(deliveryId: string, step: 'connected' | 'envelope' | 'data'): Promise<string> {
  const messageId = `<stopped-${deliveryId}@agency.test>`;
  await app.db.sql`
    update document_deliveries set message_id = ${messageId}, sending_at = now(), smtp_step = ${step}, attempts = 5 where id = ${deliveryId}`;
  return messageId;
}

describe('a delivery whose job can no longer run', () => {
  it('the sweep settles it by the step its last attempt reached (unknown from data, failed before), and the run completes', async () => {
    const w = await makeWorld();
    await stoppedAt(w.delivery.ap, 'data');
    await stoppedAt(w.delivery.cfo, 'envelope');
    await app.db.sql`update document_deliveries set detail = '451 4.3.0 try later' where id = ${w.delivery.cfo}`;
    await exhaustJob(w.delivery.ap);
    await exhaustJob(w.delivery.cfo);
    expect(await settleAbandonedDeliveries(app.db.sql, new Date())).toBeGreaterThanOrEqual(2);
    expect(await delivery(w.delivery.ap)).toMatchObject({
      state: 'unknown',
      sending: false,
      detail:
        'The delivery job stopped and cannot run again; it had begun sending the message data, so the server may have the message. Not re-sent automatically.',
    });
    expect(await delivery(w.delivery.cfo)).toMatchObject({
      state: 'failed',
      sending: false,
      detail: 'The delivery job stopped and cannot run again; the message was not sent (last reply: 451 4.3.0 try later).',
    });
    expect(await runStatus(w)).toBe('completed');
    expect(await settleAbandonedDeliveries(app.db.sql, new Date())).toBe(0);
  });

  it('leaves a delivery whose job has attempts left or is running its last one; settles one whose job is gone', async () => {
    const w = await makeWorld();
    await exhaustJob(w.delivery.ap, { attempts: 4 });
    await stoppedAt(w.delivery.cfo, 'data');
    await exhaustJob(w.delivery.cfo, { locked: true });
    await settleAbandonedDeliveries(app.db.sql, new Date());
    expect(await delivery(w.delivery.ap)).toMatchObject({ state: 'pending' });
    expect(await delivery(w.delivery.cfo)).toMatchObject({ state: 'pending' });
    expect(await runStatus(w)).toBe('delivering');

    // an operator cancelled the job before it ever ran: certainly not sent
    await app.db.sql`delete from graphile_worker._private_jobs where key = ${`documents:deliver:${w.delivery.ap}`}`;
    await settleAbandonedDeliveries(app.db.sql, new Date());
    expect(await delivery(w.delivery.ap)).toMatchObject({
      state: 'failed',
      detail: 'The delivery job stopped and cannot run again; the message was not sent.',
    });
    expect(await delivery(w.delivery.cfo)).toMatchObject({ state: 'pending' });
  });

  it('the last attempt that throws settles it at once; an earlier one leaves it to the retry', async () => {
    const w = await makeWorld();
    await stoppedAt(w.delivery.ap, 'data');
    await deliveryAttemptFailed(jobCtx({ attempt: 4 }), { deliveryId: w.delivery.ap }, 'connection terminated');
    expect(await delivery(w.delivery.ap)).toMatchObject({ state: 'pending' });
    await deliveryAttemptFailed(jobCtx({ attempt: 5 }), { deliveryId: w.delivery.ap }, 'connection terminated');
    expect(await delivery(w.delivery.ap)).toMatchObject({
      state: 'unknown',
      detail:
        "The delivery job's last attempt failed (connection terminated); it had begun sending the message data, so the server may have the message. Not re-sent automatically.",
    });
  });

  it('a resend after the sweep queues a new job in place of the exhausted one, and sends with the same Message-ID', async () => {
    const w = await makeWorld();
    const messageId = await stoppedAt(w.delivery.ap, 'data');
    await exhaustJob(w.delivery.ap);
    await settleAbandonedDeliveries(app.db.sql, new Date());
    expect(await delivery(w.delivery.ap)).toMatchObject({ state: 'unknown' });
    const session = await login(app, w.admin.email, w.admin.password);
    const res = await app.call('POST', `/api/w/${w.ws.slug}/documents/${w.documents.html}/deliveries/${w.delivery.ap}/resend`, { session });
    expect(res.status).toBe(202);
    const [job] = await app.db.sql<{ attempts: number }[]>`
      select attempts from graphile_worker.jobs where key = ${`documents:deliver:${w.delivery.ap}`}`;
    expect(job).toEqual({ attempts: 0 });
    await deliverTimesheet(jobCtx({ attempt: 1 }), { deliveryId: w.delivery.ap });
    expect(await delivery(w.delivery.ap)).toMatchObject({ state: 'sent', messageId });
    expect(smtp.messagesTo(w.ap).map((m) => m.messageId)).toEqual([messageId]);
  });
});

describe('POST /documents/{id}/deliveries/{deliveryId}/resend', () => {
  let w: World;
  let session: SessionCookie;
  const resendPath = (documentId: string, deliveryId: string) => `/api/w/${w.ws.slug}/documents/${documentId}/deliveries/${deliveryId}/resend`;

  beforeAll(async () => {
    w = await makeWorld();
    session = await login(app, w.admin.email, w.admin.password);
    smtp.program(answerAt('data', 'drop', { to: w.ap }));
    expect(await runQueued(w)).toEqual([]);
    smtp.program(null);
    expect(await delivery(w.delivery.ap)).toMatchObject({ state: 'unknown' });
    expect(await runStatus(w)).toBe('completed');
  });

  it('resends an unknown delivery once, with its Message-ID (a receiver can tell the copy), and records the decision', async () => {
    const before = await delivery(w.delivery.ap);
    const res = await app.call('POST', resendPath(w.documents.html, w.delivery.ap), { session });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      id: w.delivery.ap,
      kind: 'timesheet',
      email: w.ap,
      state: 'pending',
      detail: null,
      attemptedAt: before.attemptedAt!.toISOString(),
    });
    expect(await runStatus(w)).toBe('delivering');
    const [record] = await app.db.sql`
      select previous_state, previous_detail, requested_by from delivery_resends where delivery_id = ${w.delivery.ap}`;
    expect(record).toEqual({ previous_state: 'unknown', previous_detail: 'Connection closed unexpectedly', requested_by: w.admin.id });
    expect((await queuedJobs(app.db.sql, w)).map((j) => j.deliveryId)).toEqual([w.delivery.ap]);

    const received = smtp.received.filter((m) => m.envelope.to.includes(w.ap)).length;
    expect(await runQueued(w)).toEqual([]);
    expect(smtp.received.filter((m) => m.envelope.to.includes(w.ap))).toHaveLength(received + 1);
    const [m, ...more] = smtp.messagesTo(w.ap);
    expect(more).toEqual([]);
    const after = await delivery(w.delivery.ap);
    expect(after).toMatchObject({ state: 'sent', attempts: 1 });
    expect(after.messageId).toBe(m!.messageId);
    expect(after.messageId).toBe(before.messageId);
    expect(await runStatus(w)).toBe('completed');

    // a job run again sends nothing more
    await deliverTimesheet(jobCtx({ attempt: 1 }), { deliveryId: w.delivery.ap });
    expect(smtp.messagesTo(w.ap)).toHaveLength(1);
  });

  it('409 delivery_not_resendable for a sent or skipped delivery', async () => {
    for (const id of [w.delivery.cfo, w.delivery.optedOut]) {
      const res = await app.call('POST', resendPath(w.documents.csv, id), { session });
      expect(res.status).toBe(409);
      expect(res.body.error.details).toEqual({ reason: 'delivery_not_resendable', state: (await delivery(id)).state });
    }
  });

  it('resends a failed delivery through any document of the timesheet', async () => {
    await app.db.sql`update document_deliveries set state = 'failed', detail = '550 5.1.1 mailbox unavailable' where id = ${w.delivery.cfo}`;
    const before = await delivery(w.delivery.cfo);
    const res = await app.call('POST', resendPath(w.documents.csv, w.delivery.cfo), { session });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ id: w.delivery.cfo, state: 'pending' });
    expect(await runQueued(w)).toEqual([]);
    expect(smtp.messagesTo(w.cfo)).toHaveLength(2);
    expect(await delivery(w.delivery.cfo)).toMatchObject({ state: 'sent' });
    // a failed delivery never arrived: the resend is a new email
    expect((await delivery(w.delivery.cfo)).messageId).not.toBe(before.messageId);
  });

  it('403 session_required for a token, 403 admin_only for a member', async () => {
    const token = (await makeToken(app.db.sql, w.ws, w.admin)).token;
    const byToken = await app.call('POST', resendPath(w.documents.html, w.delivery.ap), { token });
    expect([byToken.status, byToken.body.error.details.reason]).toEqual([403, 'session_required']);
    const member = await login(app, w.member.email, w.member.password);
    const byMember = await app.call('POST', resendPath(w.documents.html, w.delivery.ap), { session: member });
    expect([byMember.status, byMember.body.error.details.reason]).toEqual([403, 'admin_only']);
  });

  it('404 for an unknown delivery, a delivery of another document, or a document of another workspace; 400 for a bad id', async () => {
    const other = await makeWorld();
    const cases: [string, string, number, string][] = [
      [w.documents.html, '00000000-0000-4000-8000-000000000000', 404, 'unknown_delivery'],
      [w.documents.html, other.delivery.ap, 404, 'unknown_delivery'],
      [other.documents.html, other.delivery.ap, 404, 'unknown_document'],
      [w.documents.html, 'nope', 400, 'bad_uuid'],
      ['nope', w.delivery.ap, 400, 'bad_uuid'],
    ];
    for (const [doc, id, status, reason] of cases) {
      const res = await app.call('POST', resendPath(doc, id), { session });
      expect([res.status, res.body.error.details.reason], `${doc} ${id}`).toEqual([status, reason]);
    }
  });

  it('409 run_voided once the run is voided', async () => {
    const v = await makeWorld();
    smtp.program(answerAt('rcpt', { code: 550 }, { to: v.ap }));
    await deliverTimesheet(jobCtx({ attempt: 1 }), { deliveryId: v.delivery.ap });
    await app.db.sql`update billing_runs set status = 'voided', voided_at = now() where id = ${v.runId}`;
    const admin = await login(app, v.admin.email, v.admin.password);
    const res = await app.call('POST', `/api/w/${v.ws.slug}/documents/${v.documents.html}/deliveries/${v.delivery.ap}/resend`, { session: admin });
    expect([res.status, res.body.error.details.reason]).toEqual([409, 'run_voided']);
    expect(await delivery(v.delivery.ap)).toMatchObject({ state: 'failed' });
  });
});

describe('void notices (issue 23)', () => {
  const notices = (runId: string) =>
    app.db.sql<{ id: string; email: string; state: string; noticeOf: string }[]>`
      select dd.id, dd.email, dd.state, dd.notice_of as "noticeOf" from document_deliveries dd join timesheets s on s.id = dd.timesheet_id
      where s.run_id = ${runId} and dd.kind = 'void_notice' order by dd.email`;

  it('a timesheet email under way while its run is voided still earns its recipient the notice, sent once', async () => {
    const v = await makeWorld();
    const admin = await login(app, v.admin.email, v.admin.password);
    const smtpMailer = new SmtpMailer(smtp.url);
    // the run is voided while this email is being sent: the void finds the delivery pending and owes it nothing yet
    const voidingMailer = {
      send: async (...args: Parameters<SmtpMailer['send']>) => {
        const voided = await app.call('POST', `/api/w/${v.ws.slug}/billing/runs/${v.runId}/void`, { session: admin, body: { reason: 'wrong rates' } });
        expect(voided.status).toBe(200);
        expect(await notices(v.runId)).toEqual([]);
        return smtpMailer.send(...args);
      },
    };
    await deliverAndNotify({ ...jobCtx({ attempt: 1 }), mailer: voidingMailer }, { deliveryId: v.delivery.ap });
    expect(await delivery(v.delivery.ap)).toMatchObject({ state: 'sent' });
    const [notice, ...more] = await notices(v.runId);
    expect(more).toEqual([]);
    expect(notice).toMatchObject({ email: v.ap, state: 'pending', noticeOf: v.delivery.ap });

    await deliverAndNotify(jobCtx({ attempt: 1 }), { deliveryId: notice!.id });
    expect(smtp.messagesTo(v.ap).map((m) => m.subject)).toEqual([
      `Stundennachweis ${v.number} — Initech GmbH`,
      `Stundennachweis ${v.number} storniert — Initech GmbH`,
    ]);
    expect((await notices(v.runId))[0]).toMatchObject({ state: 'sent' });
    // the other recipient's email never left (the run was voided first): skipped, and no notice
    await deliverAndNotify(jobCtx({ attempt: 1 }), { deliveryId: v.delivery.cfo });
    expect(await delivery(v.delivery.cfo)).toMatchObject({ state: 'skipped' });
    expect(await notices(v.runId)).toHaveLength(1);
  });

  it('a failed notice of a voided run can be resent (its timesheet email cannot)', async () => {
    const v = await makeWorld();
    await deliverTimesheet(jobCtx({ attempt: 1 }), { deliveryId: v.delivery.ap });
    const admin = await login(app, v.admin.email, v.admin.password);
    expect((await app.call('POST', `/api/w/${v.ws.slug}/billing/runs/${v.runId}/void`, { session: admin, body: { reason: 'wrong rates' } })).status).toBe(200);
    const [notice] = await notices(v.runId);
    smtp.program(answerAt('rcpt', { code: 550 }, { to: v.ap }));
    await deliverTimesheet(jobCtx({ attempt: 1 }), { deliveryId: notice!.id });
    expect((await notices(v.runId))[0]).toMatchObject({ state: 'failed' });
    smtp.program(null);
    const resend = (id: string) => app.call('POST', `/api/w/${v.ws.slug}/documents/${v.documents.html}/deliveries/${id}/resend`, { session: admin });
    expect((await resend(v.delivery.ap)).body.error.details.reason).toBe('delivery_not_resendable');
    const res = await resend(notice!.id);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ id: notice!.id, kind: 'void_notice', state: 'pending' });
    await deliverTimesheet(jobCtx({ attempt: 1 }), { deliveryId: notice!.id });
    expect(smtp.messagesTo(v.ap).filter((m) => m.subject?.includes('storniert'))).toHaveLength(1);
  });
});
