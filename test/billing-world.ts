import type { Db } from '../src/db/connect.ts';
import { makeLogger } from '../src/log.ts';
import type { JobCtx } from '../src/core/jobs/ctx.ts';
import type { Mailer } from '../src/core/mail/mailer.ts';
import type { PdfRenderer } from '../src/core/documents/pdf-renderer.ts';
import { login, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makeBank, makePeriod, makeProject, makeTicket, makeTimeEntry, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

/**
 * A small agency to bill, shared by the billing suites: two clients in different locales and
 * layouts, every billing policy and mode, a closed period (October 2026) full of time and an
 * open one after it.
 * - Acme (en-US, combined, code ACME): project WEB billed by period — a paid ticket, a free
 *   ticket, a ticket drawing on the "Prepaid" bank (600 minutes deposited), and a non-billable entry.
 * - Initech (de-DE, one timesheet per project, code INI): project APP billed on close (one ticket
 *   closed in October, one still open) and project API billed by period.
 * - OPS: internal work (no client), never billed.
 */
export interface BillingWorld {
  ws: Workspace;
  owner: Person;
  admin: Person;
  member: Person;
  session: SessionCookie;
  acme: { id: string; code: string };
  initech: { id: string; code: string };
  bank: { id: string };
  october: { id: string };
  november: { id: string };
  tickets: Record<'paid' | 'free' | 'banked' | 'closedOnClose' | 'openOnClose' | 'api' | 'internal', { id: string; humanId: string }>;
  /** Entries the October run must bill. */
  billable: string[];
  /** Entries it must leave alone (non-billable, open on_close ticket, internal, November). */
  untouched: string[];
}

/**
 * `delivery`: how both clients' timesheets go out (issue 23); `automatic` unless a suite is about
 * the review before sending, since these suites are about what is sent.
 */
export async function makeBillingWorld(app: TestApp, opts: { octoberOpen?: boolean; delivery?: 'review' | 'automatic' } = {}): Promise<BillingWorld> {
  const sql = app.db.sql;
  const ws = await makeWorkspace(sql);
  const owner = await makeUser(sql, ws, { role: 'owner', name: 'Olivia Owner' });
  const admin = await makeUser(sql, ws, { role: 'admin', name: 'Adam Admin' });
  const member = await makeUser(sql, ws, { role: 'member', name: 'Maya Member' });
  const delivery = opts.delivery ?? 'automatic';
  const acme = await client(sql, ws, {
    name: 'Acme Corp',
    code: 'ACME',
    locale: 'en-US',
    layout: 'combined',
    recipients: ['ap@acme.test', 'cfo@acme.test'],
    delivery,
  });
  const initech = await client(sql, ws, {
    name: 'Initech GmbH',
    code: 'INI',
    locale: 'de-DE',
    layout: 'project',
    recipients: ['buchhaltung@initech.test'],
    delivery,
  });
  const bank = await makeBank(sql, ws, { clientId: acme.id, name: 'Prepaid', deposits: [600] });
  const members = [{ person: owner }, { person: admin }, { person: member }];
  const web = await makeProject(sql, ws, { key: 'WEB', billingClientId: acme.id, members });
  const appP = await makeProject(sql, ws, { key: 'APP', billingClientId: initech.id, members });
  const api = await makeProject(sql, ws, { key: 'API', billingClientId: initech.id, members });
  const ops = await makeProject(sql, ws, { key: 'OPS', members });
  await sql`update projects set billing_mode = 'on_close' where id = ${appP.id}`;
  const october = await makePeriod(sql, ws, { start: '2026-10-01', end: '2026-10-31', closed: !opts.octoberOpen });
  const november = await makePeriod(sql, ws, { start: '2026-11-01', end: '2026-11-30' });

  const ticket = async (projectId: string, title: string) => {
    const t = await makeTicket(sql, ws, { projectId, title, reporterId: owner.id });
    return { id: t.id, humanId: t.humanId };
  };
  const tickets = {
    paid: await ticket(web.id, 'Checkout redesign, phase 1'),
    free: await ticket(web.id, 'Warranty fix: broken footer link'),
    banked: await ticket(web.id, 'Monthly maintenance'),
    closedOnClose: await ticket(appP.id, 'Push notifications'),
    openOnClose: await ticket(appP.id, 'Offline mode'),
    api: await ticket(api.id, 'Rate limiting for "partners", v2'),
    internal: await ticket(ops.id, 'Team offsite planning'),
  };
  await sql`update tickets set billing_policy = 'free' where id = ${tickets.free.id}`;
  await sql`update tickets set billing_policy = ${`bank:${bank.id}`} where id = ${tickets.banked.id}`;
  await sql`update tickets set billing_description = 'Checkout redesign (phase 1 of 3)' where id = ${tickets.paid.id}`;
  await sql`
    update tickets set state_id = (select id from workflow_states where workspace_id = ${ws.id} and category = 'closed' order by position limit 1),
                       closed_at = '2026-10-20T12:00:00Z'
    where id = ${tickets.closedOnClose.id}`;

  const log = (t: { id: string }, who: Person, spentOn: string, minutes: number, billable = true) =>
    makeTimeEntry(sql, ws, { ticketId: t.id, userId: who.id, spentOn, minutes, billable }).then((e) => e.id);
  const billable = [
    await log(tickets.paid, member, '2026-10-02', 90),
    await log(tickets.paid, admin, '2026-10-03', 30),
    await log(tickets.free, member, '2026-10-05', 45),
    await log(tickets.banked, member, '2026-10-06', 120),
    await log(tickets.closedOnClose, member, '2026-10-07', 60),
    await log(tickets.closedOnClose, admin, '2026-10-31', 90),
    await log(tickets.api, member, '2026-10-31', 90),
  ];
  const untouched = [
    await log(tickets.paid, member, '2026-10-09', 15, false),
    await log(tickets.openOnClose, member, '2026-10-10', 60),
    await log(tickets.internal, member, '2026-10-11', 60),
    await log(tickets.paid, member, '2026-11-02', 60),
  ];
  const session = await login(app, owner.email, owner.password);
  return { ws, owner, admin, member, session, acme, initech, bank, october, november, tickets, billable, untouched };
}

async function client(
  sql: Db,
  ws: Workspace,
  o: { name: string; code: string; locale: string; layout: 'combined' | 'project'; recipients: string[]; delivery: 'review' | 'automatic' },
): Promise<{ id: string; code: string }> {
  const [c] = await sql<{ id: string }[]>`
    insert into clients (workspace_id, name, code, locale, timesheet_layout, delivery)
    values (${ws.id}, ${o.name}, ${o.code}, ${o.locale}, ${o.layout}, ${o.delivery}) returning id`;
  for (const email of o.recipients) await sql`insert into client_billing_recipients (client_id, email, name) values (${c!.id}, ${email}, ${email})`;
  return { id: c!.id, code: o.code };
}

/** A job context over the test database; pdf and mail only where a suite gives them. */
export function jobCtx(sql: Db, opts: { pdf?: PdfRenderer | null; mailer?: Mailer; checkpoint?: (step: string) => void; now?: () => Date } = {}): JobCtx {
  return {
    sql,
    now: opts.now ?? (() => new Date()),
    log: makeLogger('silent'),
    pdf: opts.pdf ?? null,
    mailer: opts.mailer ?? {
      send: () => Promise.reject(new Error('this suite sends no mail')),
    },
    mailFrom: 'Billing <billing@agency.test>',
    checkpoint: opts.checkpoint,
  };
}

/** Runs every queued billing job of the database once, in order (the worker's work, without the worker): returns how many ran. */
export async function drainBillingJobs(sql: Db, ctx: JobCtx): Promise<number> {
  const { allocateRun } = await import('../src/core/billing/allocate.ts');
  const { renderDocument } = await import('../src/core/documents/render-document.ts');
  const { allocateJob, renderJob } = await import('../src/core/jobs/catalog.ts');
  // as the worker runs them: the payload checked by the job's declaration, then the operation
  const ops: Record<string, (c: JobCtx, p: unknown) => Promise<unknown>> = {
    [allocateJob.task]: (c, p) => allocateRun(c, allocateJob.payload.parse(p)),
    [renderJob.task]: (c, p) => renderDocument(c, renderJob.payload.parse(p)),
  };
  let ran = 0;
  for (;;) {
    const jobs = await sql<{ id: string; task: string; payload: unknown }[]>`
      select j.id, t.identifier as task, j.payload::jsonb as payload from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
      where t.identifier = any(${Object.keys(ops)}::text[]) order by j.id`;
    if (jobs.length === 0) return ran;
    for (const j of jobs) {
      await ops[j.task]!(ctx, j.payload);
      await sql`delete from graphile_worker._private_jobs where id = ${j.id}`;
      ran++;
    }
  }
}
