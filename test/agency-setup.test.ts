import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailer } from '../src/jobs/machinery/mail-from-config.ts';
import { startWorker, type StartedWorker } from '../src/jobs/worker.ts';
import { makeLogger } from '../src/log.ts';
import { startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { startSmtpSink, type SinkMessage, type SmtpSink } from './helpers/smtp.ts';
import { cleanEnv, runToEnd } from './helpers/spawn.ts';
import { wtHere, type WtResult } from './helpers/wt.ts';

/**
 * Issue 22's first acceptance test: an agency sets itself up from `wt workspace create` and reaches
 * delivered timesheets through the public interfaces only — no SQL write, no demo seed. A real
 * SMTP server receives every email (the invitation links are read from it), a real graphile-worker
 * runs every job. The first test drives the set-up through REST, the second through the CLI as far
 * as the CLI reaches: every administrative step has a wt command; what a browser does (accepting an
 * invitation) and the daily work (tickets, time) stay REST's.
 *
 * The first Owner comes in through `wt workspace create --owner` (an emailed invitation): before it,
 * an empty workspace had no one to run `wt invite` as, and `wt user create --role owner --password`
 * (a password on the command line) was the only way in.
 */
let app: TestApp;
let smtp: SmtpSink;
let worker: StartedWorker;
const PUBLIC_URL = 'https://wt.agency.test';
const wtBin = path.resolve('bin/wt.js');

beforeAll(async () => {
  app = await startTestApp();
  smtp = await startSmtpSink();
  const services = {
    sql: app.db.sql,
    now: () => new Date(),
    log: makeLogger('silent'),
    // html and csv timesheets: billing-e2e proves the pdf through Chromium
    pdf: null,
    mailer: createMailer({ SMTP_URL: smtp.url }),
    mailFrom: 'Work tracker <noreply@agency.test>',
    publicUrl: PUBLIC_URL,
  };
  worker = await startWorker(app.db.url, services, { concurrency: 4, pollInterval: 100 });
}, 60_000);
afterAll(async () => {
  await worker?.stop();
  await smtp?.close();
  await app?.close();
});

/** `wt ARGS` through `node bin/wt.js`: `workspace create --owner` and its refusals' exit codes as a process gives them. */
const wtProcess = (...args: string[]) => runToEnd('node', [wtBin, ...args], cleanEnv({ DATABASE_URL: app.db.url, LOG_LEVEL: 'silent' }));
/** What a command run in this process (test/helpers/wt.ts) printed, once it exited 0. */
const wt = async (...args: string[]) => succeeded(args, await wtHere(cleanEnv({ DATABASE_URL: app.db.url, LOG_LEVEL: 'silent' }), args));
const succeeded = (args: string[], r: WtResult) => {
  expect(r.code, `wt ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout;
};

/** The first of last month and a day in it (time is logged there, then the period is closed). */
function lastMonth(): { start: string; day: (d: number) => string; month: string } {
  const d = new Date();
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() - 1);
  const month = d.toISOString().slice(0, 7);
  return { start: `${month}-01`, day: (n) => `${month}-${String(n).padStart(2, '0')}`, month };
}

/** Waits (bounded, only to stop a hang) until `address` received `n` emails; returns them. */
async function mailTo(address: string, n = 1): Promise<SinkMessage[]> {
  for (let i = 0; i < 600 && smtp.messagesTo(address).length < n; i++) await new Promise((r) => setTimeout(r, 50));
  const got = smtp.messagesTo(address);
  expect(got.length, `emails to ${address}`).toBe(n);
  return got;
}

/** The one-time link's secret of an invitation email. */
const linkIn = (m: SinkMessage) => {
  const match = new RegExp(`${PUBLIC_URL}/ops/join/([A-Za-z0-9_-]+)`).exec(m.text ?? '');
  expect(match, m.text).not.toBeNull();
  return match![1]!;
};

/** A caller of one workspace's API with a browser session. */
interface Caller {
  session: SessionCookie;
  identityId: string;
  call: (method: string, p: string, body?: unknown) => Promise<any>;
}

function caller(slug: string, session: SessionCookie, identityId: string): Caller {
  return {
    session,
    identityId,
    call: async (method, p, body) => {
      const res = await app.call(method, `/api/w/${slug}${p}`, { session, body });
      expect(res.status, `${method} ${p}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
      return res.body;
    },
  };
}

/** Accepts the invitation emailed to `email` (its only email so far) with a new password: the invited person's session. */
async function acceptInvitation(slug: string, email: string): Promise<Caller> {
  const [mail] = await mailTo(email);
  const secret = linkIn(mail!);
  const accepted = await app.call('POST', `/api/auth/invitations/${secret}/accept`, { body: { password: `${email} passphrase` } });
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
  const cookie = (accepted.headers.get('set-cookie') ?? '').split(';')[0]!;
  return caller(slug, { cookie, csrfToken: accepted.body.csrfToken }, accepted.body.identityId);
}

/** The agency's world once set up: ids the billing half needs. */
interface Agency {
  slug: string;
  owner: Caller;
  admin: Caller;
  member: Caller;
  clientUser: Caller;
  acme: { id: string };
  globex: { id: string };
  web: { id: string; key: string };
  app: { id: string; key: string };
}

/** Recipients through the API: Acme (German) two addresses and an opted-out one; Globex its client user and its accounts address. */
async function setRecipients(a: Agency, domain: string, clientUserEmail: string) {
  const acme = await a.admin.call('PUT', `/clients/${a.acme.id}/recipients`, {
    recipients: [
      { email: `ap@acme.${domain}`, name: 'Accounts payable' },
      { email: `cfo@acme.${domain}`, name: 'Claudia Finanz' },
      { email: `old@acme.${domain}`, optedOut: true },
    ],
  });
  const globex = await a.admin.call('PUT', `/clients/${a.globex.id}/recipients`, {
    recipients: [{ identityId: a.clientUser.identityId }, { email: `accounts@globex.${domain}` }],
  });
  expectRecipients(a, domain, clientUserEmail, acme, globex);
}

/** The recipients either door set: Acme's in the order given, Globex's client user linked to their login. */
function expectRecipients(a: Agency, domain: string, clientUserEmail: string, acme: any, globex: any) {
  expect(acme.recipients.map((r: any) => r.email)).toEqual([`ap@acme.${domain}`, `cfo@acme.${domain}`, `old@acme.${domain}`]);
  expect(globex.recipients).toEqual([
    expect.objectContaining({ email: clientUserEmail, identityId: a.clientUser.identityId, optedOut: false }),
    expect.objectContaining({ email: `accounts@globex.${domain}`, identityId: null }),
  ]);
}

/** How a period is opened and closed: REST by default (the CLI variant passes wt period open|close). */
interface PeriodDoor {
  open: (periodStart: string) => Promise<any>;
  close: (period: { id: string; periodStart: string }) => Promise<any>;
}
const restPeriods = (a: Agency): PeriodDoor => ({
  open: (periodStart) => a.owner.call('POST', '/periods', { periodStart }),
  close: (period) => a.owner.call('POST', `/periods/${period.id}/close`, {}),
});

/**
 * The work and the billing: categories and memberships are already set; a period opened for last
 * month (through `periods`), tickets by a member and the client user, time by the member and the
 * admin (REST), the period closed, billed by `bill`, and each timesheet delivered.
 */
async function workAndBill(
  a: Agency,
  domain: string,
  clientUserEmail: string,
  categories: { development: string; design: string },
  bill: (periodId: string) => Promise<string>,
  periods: PeriodDoor = restPeriods(a),
) {
  const month = lastMonth();
  const period = await periods.open(month.start);
  expect(period).toMatchObject({ periodStart: month.start, closedAt: null });

  // tickets: the member's in both projects, the client user's in the project their client collaborates on
  const webTicket = await a.member.call('POST', '/tickets', { projectId: a.web.id, title: 'Relaunch the landing page' });
  expect(webTicket.humanId).toBe(`${a.web.key}-1`);
  const appTicket = await a.member.call('POST', '/tickets', { projectId: a.app.id, title: 'Crash on login' });
  expect(appTicket.humanId).toBe(`${a.app.key}-1`);
  const visible = await a.clientUser.call('GET', '/projects');
  expect(visible.projects.map((p: any) => p.key).sort()).toEqual([a.app.key, a.web.key].sort());
  const asked = await a.clientUser.call('POST', '/tickets', { projectId: a.web.id, title: 'Please add our logo to the footer' });
  expect(asked.humanId).toBe(`${a.web.key}-2`);

  // time in last month (the member bills as Development by default; the admin as Design on APP)
  const log = (who: Caller, ticketId: string, day: number, minutes: number) =>
    who.call('POST', '/time', { ticketId, spentOn: month.day(day), minutes, note: 'work' });
  await log(a.member, webTicket.id, 3, 90);
  await log(a.member, asked.id, 4, 30);
  await log(a.member, appTicket.id, 5, 60);
  await log(a.admin, appTicket.id, 6, 45);

  const closed = await periods.close(period);
  expect(closed.closedAt).not.toBeNull();
  const runId = await bill(period.id);

  // wait for every delivery of the run to be sent (bounded)
  let documents: any[] = [];
  let run: any;
  for (let i = 0; i < 900; i++) {
    run = await a.owner.call('GET', `/billing/runs/${runId}`);
    expect(run.status, run.error ?? '').not.toBe('failed');
    documents = (await a.owner.call('GET', `/documents?runId=${runId}`)).documents;
    const deliveries = documents.flatMap((d: any) => d.deliveries);
    if (run.status === 'completed' && deliveries.length > 0 && deliveries.every((x: any) => x.state !== 'pending')) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(run).toMatchObject({ status: 'completed', entryCount: 4, minutes: 225, billableMinutes: 225 });
  // each entry carries the category the set-up gave (the member's default; the admin's override on APP) and is billed
  const timeOf = async (who: Caller) =>
    (await a.owner.call('GET', `/time?from=${month.start}&to=${month.day(28)}&userId=${who.identityId}`)).entries.map((e: any) => [
      e.ticketRef,
      e.minutes,
      e.categoryId,
      e.billed,
    ]);
  expect(await timeOf(a.member)).toEqual([
    [`${a.web.key}-1`, 90, categories.development, true],
    [`${a.web.key}-2`, 30, categories.development, true],
    [`${a.app.key}-1`, 60, categories.development, true],
  ]);
  expect(await timeOf(a.admin)).toEqual([[`${a.app.key}-1`, 45, categories.design, true]]);
  const html = documents.filter((d: any) => d.format === 'html');
  expect(html.map((d: any) => [d.clientId, d.locale]).sort()).toEqual(
    [
      [a.acme.id, 'de-DE'],
      [a.globex.id, 'en-US'],
    ].sort(),
  );
  const states = html.flatMap((d: any) => d.deliveries.map((x: any) => `${x.email}:${x.state}`)).sort();
  expect(states).toEqual(
    [`ap@acme.${domain}:sent`, `cfo@acme.${domain}:sent`, `old@acme.${domain}:skipped`, `accounts@globex.${domain}:sent`, `${clientUserEmail}:sent`].sort(),
  );

  // each recipient set through the API got exactly one email (the client user's other one is their invitation)
  const acmeNumber = html.find((d: any) => d.clientId === a.acme.id).number;
  const globexNumber = html.find((d: any) => d.clientId === a.globex.id).number;
  const timesheetsTo = (address: string) => smtp.messagesTo(address).filter((m) => m.attachments.length > 0);
  for (const address of [`ap@acme.${domain}`, `cfo@acme.${domain}`]) {
    const got = smtp.messagesTo(address);
    expect(got, address).toHaveLength(1);
    expect(got[0]!.attachments.map((x) => x.filename).sort()).toEqual([`${acmeNumber}.csv`, `${acmeNumber}.html`]);
    expect(got[0]!.text).toContain('Stundennachweis'); // Acme's locale is German
  }
  expect(smtp.messagesTo(`old@acme.${domain}`)).toHaveLength(0);
  expect(smtp.messagesTo(`accounts@globex.${domain}`)).toHaveLength(1);
  expect(timesheetsTo(clientUserEmail)).toHaveLength(1);
  expect(smtp.messagesTo(clientUserEmail)).toHaveLength(2);
  for (const address of [`accounts@globex.${domain}`, clientUserEmail]) {
    expect(
      timesheetsTo(address)[0]!
        .attachments.map((x) => x.filename)
        .sort(),
    ).toEqual([`${globexNumber}.csv`, `${globexNumber}.html`]);
    expect(timesheetsTo(address)[0]!.text).toContain('timesheet');
  }
  return { documents, runId };
}

describe('wt workspace create --owner', () => {
  it(
    'emails the first Owner an invitation from no one; its link makes them the Owner; a bad address or a missing name leaves no workspace',
    { timeout: 120_000 },
    async () => {
      const slug = `first-${Date.now().toString(36)}`;
      const email = `founder@${slug}.test`;
      const first = ['workspace', 'create', '--slug', slug, '--name', 'First Agency', '--owner', email, '--owner-name', 'Fina Founder'];
      const made = JSON.parse(succeeded(first, await wtProcess(...first)));
      expect(made).toMatchObject({ slug, ownerInvitationId: expect.any(String) });
      const [mail] = await mailTo(email);
      expect(mail!.subject).toBe('You are invited to First Agency');
      const owner = await acceptInvitation(slug, email);
      const people = await owner.call('GET', '/people');
      expect(people.people.map((p: any) => [p.name, p.role])).toEqual([['Fina Founder', 'owner']]);
      // the CLI's principal is now that Owner
      const invited = JSON.parse(await wt('invite', '--workspace', slug, '--email', `second@${slug}.test`, '--name', 'Sam Second', '--role', 'admin'));
      expect(invited.invitedBy).toBe(owner.identityId);

      const refused = async (...args: string[]) => {
        const r = await wtProcess(...args);
        expect(r.code, r.stderr).toBe(2);
        return r.stderr;
      };
      expect(await refused('workspace', 'create', '--slug', `${slug}-x`, '--name', 'X', '--owner', 'a@b.test, c@d.test', '--owner-name', 'X')).toContain(
        'bare email address',
      );
      expect(await refused('workspace', 'create', '--slug', `${slug}-y`, '--name', 'Y', '--owner', `y@${slug}.test`)).toContain('--owner-name is required');
      const left = await app.db.sql`select slug from workspaces where slug in (${`${slug}-x`}, ${`${slug}-y`})`;
      expect(left).toHaveLength(0);
    },
  );
});

describe('an agency sets itself up from an empty workspace', () => {
  it(
    'through REST: people by invitation, clients with recipients, categories, projects with members, tickets, time, a billed and delivered period',
    { timeout: 240_000 },
    async () => {
      const slug = `agency-${Date.now().toString(36)}`;
      const domain = `${slug}.test`;
      // the only command: the workspace and its first Owner's invitation
      const ownerEmail = `olga@${domain}`;
      await wt('workspace', 'create', '--slug', slug, '--name', 'Agentur Nord', '--owner', ownerEmail, '--owner-name', 'Olga Owner');
      const owner = await acceptInvitation(slug, ownerEmail);

      // the workspace's settings: what the invitations are sent with
      await owner.call('PATCH', '/settings', {
        defaultTimezone: 'Europe/Berlin',
        defaultWeeklyTargetMinutes: 2400,
        mailFromName: 'Agentur Nord',
        mailReplyTo: `office@${domain}`,
      });

      // an admin and a member, by invitation; the links come from the emails
      const adminEmail = `ada@${domain}`;
      const memberEmail = `max@${domain}`;
      await owner.call('POST', '/invitations', { email: adminEmail, name: 'Ada Admin', role: 'admin' });
      await owner.call('POST', '/invitations', { email: memberEmail, name: 'Max Member', role: 'member' });
      const admin = await acceptInvitation(slug, adminEmail);
      const member = await acceptInvitation(slug, memberEmail);
      const invitationMail = smtp.messagesTo(adminEmail)[0]!;
      expect(invitationMail.headers.get('from')).toMatchObject({ value: [{ name: 'Agentur Nord' }] });

      // from here the invited admin sets the agency up
      const development = await admin.call('POST', '/categories', { name: 'Development' });
      const design = await admin.call('POST', '/categories', { name: 'Design' });
      await admin.call('PATCH', `/members/${member.identityId}`, { categoryId: development.id });
      await admin.call('PATCH', `/members/${admin.identityId}`, { categoryId: development.id });

      const acme = await admin.call('POST', '/clients', { name: 'Acme GmbH', code: 'acme', locale: 'de-DE', timesheetLayout: 'project' });
      const globex = await admin.call('POST', '/clients', { name: 'Globex Inc', code: 'GLX', locale: 'en-US', timesheetLayout: 'combined' });
      expect([acme.code, acme.locale, globex.code, globex.locale]).toEqual(['ACME', 'de-DE', 'GLX', 'en-US']);

      const web = await admin.call('POST', '/projects', { key: 'web', name: 'Website', billingClientId: acme.id, collaboratorIds: [globex.id] });
      const appProject = await admin.call('POST', '/projects', { key: 'APP', name: 'Mobile app', billingClientId: globex.id });
      expect([web.key, web.collaboratorIds, appProject.key]).toEqual(['WEB', [globex.id], 'APP']);
      await admin.call('PUT', `/projects/${web.id}/members/${member.identityId}`, { access: 'full' });
      await admin.call('PUT', `/projects/${appProject.id}/members/${member.identityId}`, { access: 'full' });
      await admin.call('PUT', `/projects/${appProject.id}/members/${admin.identityId}`, { access: 'limited', manager: true, categoryId: design.id });
      const members = await admin.call('GET', `/projects/${appProject.id}/members`);
      expect(members.members.map((m: any) => [m.name, m.access, m.manager, m.categoryId])).toEqual([
        ['Ada Admin', 'limited', true, design.id],
        ['Max Member', 'full', false, null],
      ]);

      // a client user of Globex, invited by the admin
      const clientEmail = `carla@globex.${domain}`;
      await admin.call('POST', '/invitations', { email: clientEmail, name: 'Carla Client', role: 'client', clientId: globex.id });
      const clientUser = await acceptInvitation(slug, clientEmail);
      const globexDetail = await admin.call('GET', `/clients/${globex.id}`);
      expect(globexDetail.users).toEqual([{ id: clientUser.identityId, name: 'Carla Client', email: clientEmail, role: 'client' }]);

      const agency: Agency = { slug, owner, admin, member, clientUser, acme, globex, web, app: appProject };
      await setRecipients(agency, domain, clientEmail);
      const people = await admin.call('GET', '/people');
      expect(people.people.map((p: any) => [p.name, p.role]).sort()).toEqual(
        [
          ['Ada Admin', 'admin'],
          ['Carla Client', 'client'],
          ['Max Member', 'member'],
          ['Olga Owner', 'owner'],
        ].sort(),
      );

      await workAndBill(agency, domain, clientEmail, { development: development.id, design: design.id }, async (periodId) => {
        const started = await app.call('POST', `/api/w/${slug}/billing/runs`, { session: owner.session, body: { periodId } });
        expect(started.status, JSON.stringify(started.body)).toBe(201);
        // new clients review their timesheets (issue 23): the owner approves the rendered run
        for (let i = 0; i < 900 && (await owner.call('GET', `/billing/runs/${started.body.id}`)).status !== 'awaiting_approval'; i++) {
          await new Promise((r) => setTimeout(r, 100));
        }
        const approved = await app.call('POST', `/api/w/${slug}/billing/runs/${started.body.id}/approve`, { session: owner.session, body: {} });
        expect(approved.status, JSON.stringify(approved.body)).toBe(200);
        return started.body.id;
      });

      // no SQL wrote any of it: every administrative write is in the audit, with its door
      const audit = await app.db.sql<{ action: string; door: string }[]>`
      select distinct a.action, a.door from ops_audit a join workspaces w on w.id = a.workspace_id where w.slug = ${slug} and a.outcome = 'succeeded'`;
      expect(audit.map((r) => r.action)).toEqual(expect.arrayContaining(['invitation.create', 'clients.create', 'projects.create', 'clients.recipients.set']));
      expect(new Set(audit.map((r) => r.door))).toEqual(new Set(['rest']));
    },
  );
});

describe('the same set-up through the CLI', () => {
  it(
    'wt workspace create --owner, settings set, invite, client create, category create, project create, member set, project member set, client recipients set, period open|close, billing run; REST only where a browser or daily work would be',
    { timeout: 240_000 },
    async () => {
      const slug = `agency-cli-${Date.now().toString(36)}`;
      const domain = `${slug}.test`;
      const ws = ['--workspace', slug];
      const ownerEmail = `olga@${domain}`;
      await wt('workspace', 'create', '--slug', slug, '--name', 'Agentur Süd', '--owner', ownerEmail, '--owner-name', 'Olga Owner');
      const owner = await acceptInvitation(slug, ownerEmail);

      // the workspace's settings: what the invitations are sent with
      const settings = JSON.parse(
        await wt('settings', 'set', ...ws, '--timezone', 'Europe/Berlin', '--weekly-target', '2400', '--mail-from-name', 'Agentur Süd'),
      );
      expect(settings).toMatchObject({ defaultTimezone: 'Europe/Berlin', defaultWeeklyTargetMinutes: 2400, mailFromName: 'Agentur Süd', mailReplyTo: null });

      // people: invited from the command line; the links are accepted where a browser would (REST)
      const adminEmail = `ada@${domain}`;
      const memberEmail = `max@${domain}`;
      expect(JSON.parse(await wt('invite', ...ws, '--email', adminEmail, '--name', 'Ada Admin', '--role', 'admin'))).toMatchObject({ state: 'pending' });
      await wt('invite', ...ws, '--email', memberEmail, '--name', 'Max Member', '--role', 'member');
      const admin = await acceptInvitation(slug, adminEmail);
      const member = await acceptInvitation(slug, memberEmail);
      expect(smtp.messagesTo(adminEmail)[0]!.headers.get('from')).toMatchObject({ value: [{ name: 'Agentur Süd' }] });

      // clients and projects from the command line
      const acme = JSON.parse(await wt('client', 'create', ...ws, '--name', 'Acme GmbH', '--code', 'acme', '--locale', 'de-de', '--layout', 'project'));
      const globex = JSON.parse(await wt('client', 'create', ...ws, '--name', 'Globex Inc', '--code', 'GLX', '--locale', 'en-US', '--layout', 'combined'));
      expect([acme.locale, globex.locale]).toEqual(['de-DE', 'en-US']);
      const web = JSON.parse(await wt('project', 'create', ...ws, '--key', 'web', '--name', 'Website', '--client', 'ACME', '--collaborators', 'GLX'));
      const appProject = JSON.parse(await wt('project', 'create', ...ws, '--key', 'APP', '--name', 'Mobile app', '--client', 'GLX', '--as', adminEmail));
      expect([web.key, web.collaboratorIds, appProject.key, appProject.billingClientId]).toEqual(['WEB', [globex.id], 'APP', globex.id]);

      // categories, then wt member set gives each staff member their default
      const development = JSON.parse(await wt('category', 'create', ...ws, '--name', 'Development', '--as', adminEmail));
      const design = JSON.parse(await wt('category', 'create', ...ws, '--name', 'Design'));
      expect([development.name, design.name]).toEqual(['Development', 'Design']);
      expect((await wt('category', 'list', ...ws)).trim().split('\n')).toEqual(['Design', 'Development']);
      for (const email of [memberEmail, adminEmail]) {
        expect(JSON.parse(await wt('member', 'set', ...ws, '--email', email, '--category', 'development', '--timezone', 'Europe/Berlin'))).toMatchObject({
          categoryId: development.id,
          timezone: 'Europe/Berlin',
        });
      }

      // project members
      await wt('project', 'member', 'set', ...ws, '--project', 'WEB', '--email', memberEmail, '--access', 'full');
      await wt('project', 'member', 'set', ...ws, '--project', 'app', '--email', memberEmail, '--access', 'full');
      expect(
        JSON.parse(
          await wt('project', 'member', 'set', ...ws, '--project', 'APP', '--email', adminEmail, '--access', 'limited', '--manager', '--category', 'Design'),
        ),
      ).toMatchObject({ identityId: admin.identityId, access: 'limited', manager: true, categoryId: design.id });
      const members = await admin.call('GET', `/projects/${appProject.id}/members`);
      expect(members.members.map((m: any) => [m.name, m.access, m.manager, m.categoryId])).toEqual([
        ['Ada Admin', 'limited', true, design.id],
        ['Max Member', 'full', false, null],
      ]);

      // the client user, invited from the command line
      const clientEmail = `carla@globex.${domain}`;
      await wt('invite', ...ws, '--email', clientEmail, '--name', 'Carla Client', '--role', 'client', '--client', 'GLX');
      const clientUser = await acceptInvitation(slug, clientEmail);

      // billing recipients: Acme's addresses in order (the last opted out), Globex's client user and its accounts address
      const agency: Agency = { slug, owner, admin, member, clientUser, acme, globex, web, app: appProject };
      const acmeRecipients = JSON.parse(
        await wt(
          'client',
          'recipients',
          'set',
          ...ws,
          '--client',
          'ACME',
          '--recipient',
          `ap@acme.${domain},Accounts payable`,
          '--recipient',
          `cfo@acme.${domain},Claudia Finanz`,
          '--opted-out',
          `old@acme.${domain}`,
        ),
      );
      const globexRecipients = JSON.parse(
        await wt(
          'client',
          'recipients',
          'set',
          ...ws,
          '--client',
          'glx',
          '--client-user',
          clientEmail,
          '--recipient',
          `accounts@globex.${domain}`,
          '--as',
          adminEmail,
        ),
      );
      expectRecipients(agency, domain, clientEmail, acmeRecipients, globexRecipients);
      expect(acmeRecipients.recipients.map((r: any) => [r.name, r.optedOut])).toEqual([
        ['Accounts payable', false],
        ['Claudia Finanz', false],
        [null, true],
      ]);

      // the period opened and closed from the command line; tickets and time are REST's (daily work, not
      // provisioning); the period is billed with wt billing run
      const cliPeriods: PeriodDoor = {
        open: async (periodStart) => JSON.parse(await wt('period', 'open', ...ws, '--start', periodStart)),
        close: async (period) => JSON.parse(await wt('period', 'close', ...ws, '--period', period.periodStart.slice(0, 7))),
      };
      await workAndBill(
        agency,
        domain,
        clientEmail,
        { development: development.id, design: design.id },
        async () => {
          // new clients review their timesheets (issue 23): --approve follows the run, approves it once rendered, and waits for its end
          const started = JSON.parse(await wt('billing', 'run', ...ws, '--period', lastMonth().month, '--approve'));
          expect(started).toMatchObject({ dryRun: false, status: 'completed' });
          return started.id;
        },
        cliPeriods,
      );

      const audit = await app.db.sql<{ action: string; door: string }[]>`
      select a.action, a.door from ops_audit a join workspaces w on w.id = a.workspace_id
      where w.slug = ${slug} and a.outcome = 'succeeded' and a.door = 'cli' order by a.at, a.id`;
      expect(audit.map((r) => r.action)).toEqual(
        expect.arrayContaining([
          'settings.update',
          'invitation.create',
          'clients.create',
          'projects.create',
          'categories.create',
          'projects.members.set',
          'clients.recipients.set',
        ]),
      );
    },
  );
});
