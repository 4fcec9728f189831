import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { createMailer } from '../src/jobs/machinery/mail-from-config.ts';
import { startWorker, type StartedWorker } from '../src/jobs/worker.ts';
import { makeLogger } from '../src/log.ts';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { checkBothSizes, launchBrowser } from './helpers/browser.ts';
import { makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.ts';

/**
 * Issue 22, the console's Setup section in Chromium: an Owner sets a new workspace up through the
 * forms alone (invite a member, a client with a billing recipient, a category, a project with that
 * member, a workflow label), each result read back through REST; every page passes axe at both
 * sizes without scrolling sideways, and the audit page names each write with the console's door.
 */
let app: TestApp;
let smtp: SmtpSink;
let worker: StartedWorker;
let browser: Browser;
let page: Page;
let ws: Workspace;
let owner: Person;
let session: SessionCookie;
const PUBLIC_URL = 'https://wt.example.test';
const memberEmail = 'mia.member@example.test';
let memberId: string;
let clientId: string;
let projectId: string;
let categoryId: string;

beforeAll(async () => {
  app = await startTestApp();
  smtp = await startSmtpSink();
  const services = {
    sql: app.db.sql,
    now: () => new Date(),
    log: makeLogger('silent'),
    pdf: null,
    mailer: createMailer({ SMTP_URL: smtp.url }),
    mailFrom: 'Work tracker <noreply@agency.test>',
    publicUrl: PUBLIC_URL,
  };
  worker = await startWorker(app.db.url, services, { concurrency: 2, pollInterval: 100 });
  // what `wt workspace create` makes: a workspace with its workflow and nothing else, and its first Owner
  ws = await makeWorkspace(app.db.sql);
  owner = await makeUser(app.db.sql, ws, { role: 'owner', name: 'Olga Owner' });
  session = await login(app, owner.email, owner.password);
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await worker?.stop();
  await smtp?.close();
  await app?.close();
});

const api = (path: string) => `/api/w/${ws.slug}${path}`;
const get = async (path: string) => {
  const res = await app.call('GET', api(path), { session });
  expect(res.status, path).toBe(200);
  return res.body;
};

/** Clicks a button that submits a form and waits for the page it leads to. */
async function submit(p: Page, button: ReturnType<Page['getByRole']>) {
  await Promise.all([p.waitForNavigation(), button.click()]);
}

const notice = () => page.getByRole('status').textContent();

it('signs in and finds Setup in the navigation, opening on People', async () => {
  await page.goto(`${app.base}/ops/setup`);
  await page.getByLabel('Email').fill(owner.email);
  await page.getByLabel('Password').fill(owner.password);
  await submit(page, page.getByRole('button', { name: 'Sign in' }));
  await page.waitForURL('**/ops/setup/people');
  expect(await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Setup' }).getAttribute('aria-current')).toBe('page');
  expect(await page.getByText('No invitation yet.').count()).toBe(1);
  await checkBothSizes(page, 'ops-setup-people-empty');
}, 60_000);

it('invites a member: the invitation is listed, the email carries the link, accepting it makes the member', async () => {
  await page.getByLabel('Email', { exact: true }).fill(memberEmail);
  await page.getByLabel('Name', { exact: true }).fill('Mia <b>Member</b>');
  await page.locator('#invite-role').selectOption('member');
  await submit(page, page.getByRole('button', { name: 'Send invitation' }));
  expect(await notice()).toContain(`an email is on its way to ${memberEmail}`);
  const row = page.getByRole('table', { name: 'Invitations, newest first' }).locator('tbody tr').first();
  expect(await row.locator('[data-invitation-state]').textContent()).toBe('pending');
  // escaped by the page: the name is text, never markup
  expect(await row.textContent()).toContain('Mia <b>Member</b>');
  expect(await page.locator('main b').count()).toBe(0);
  await checkBothSizes(page, 'ops-setup-people-invited');

  const { invitations } = await get('/invitations');
  expect(invitations).toMatchObject([{ email: memberEmail, role: 'member', state: 'pending', invitedBy: owner.id }]);
  for (let i = 0; i < 300 && smtp.messagesTo(memberEmail).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
  const [mail] = smtp.messagesTo(memberEmail);
  const secret = new RegExp(`${PUBLIC_URL}/ops/join/([A-Za-z0-9_-]+)`).exec(mail?.text ?? '')?.[1];
  expect(secret, mail?.text).toBeDefined();
  const accepted = await app.call('POST', `/api/auth/invitations/${secret}/accept`, { body: { password: 'a long passphrase for mia' } });
  expect(accepted.status).toBe(200);

  await page.reload();
  const people = page.getByRole('table', { name: 'People of the workspace' });
  expect(await people.textContent()).toContain('Mia <b>Member</b>');
  expect(await page.getByRole('table', { name: 'Invitations, newest first' }).locator('[data-invitation-state]').first().textContent()).toBe('accepted');
  const listed = (await get(`/people?q=${encodeURIComponent('mia.member')}`)).people;
  expect(listed).toMatchObject([{ email: memberEmail, role: 'member', deactivated: false }]);
  memberId = listed[0].id;
}, 60_000);

it('deactivates and reactivates the member from the People page', async () => {
  await submit(page, page.getByRole('button', { name: 'Deactivate Mia <b>Member</b>' }));
  expect(await notice()).toContain('is deactivated');
  expect((await get('/people?role=member')).people).toMatchObject([{ id: memberId, deactivated: true }]);
  await submit(page, page.getByRole('button', { name: 'Reactivate Mia <b>Member</b>' }));
  expect(await notice()).toContain('is active again');
  expect((await get('/people?role=member')).people).toMatchObject([{ id: memberId, deactivated: false }]);
}, 60_000);

it('creates a client and gives it a billing recipient', async () => {
  await page.getByRole('navigation', { name: 'Setup' }).getByRole('link', { name: 'Clients' }).click();
  await page.waitForURL('**/ops/setup/clients');
  expect(await page.getByText('No client yet.').count()).toBe(1);
  await checkBothSizes(page, 'ops-setup-clients-empty');
  await page.getByLabel('Name', { exact: true }).fill('Acme & Söhne <GmbH>');
  await page.getByLabel(/^Code/).fill('acme');
  await page.getByLabel(/^Locale/).fill('de-DE');
  await page.locator('#new-layout').selectOption('project');
  await submit(page, page.getByRole('button', { name: 'Create client' }));
  expect(await notice()).toContain('Client Acme & Söhne <GmbH> (ACME) is created.');
  clientId = new URL(page.url()).pathname.split('/').at(-1)!;
  expect(await get(`/clients/${clientId}`)).toMatchObject({ name: 'Acme & Söhne <GmbH>', code: 'ACME', locale: 'de-DE', timesheetLayout: 'project' });

  await page.getByLabel('Email of recipient 1').fill('ap@acme.test');
  await page.getByLabel('Name of recipient 1').fill('Accounts payable');
  await submit(page, page.getByRole('button', { name: 'Save recipients' }));
  expect(await notice()).toContain('1 billing recipient(s) saved.');
  expect((await get(`/clients/${clientId}/recipients`)).recipients).toMatchObject([
    { email: 'ap@acme.test', name: 'Accounts payable', optedOut: false, identityId: null },
  ]);
  // a second recipient in the fresh blank row, the first one kept
  expect(await page.getByLabel('Email of recipient 1').inputValue()).toBe('ap@acme.test');
  // the operation's rules hold in the form: the same address twice is refused, nothing changes
  await page.getByLabel('Email of recipient 2').fill('AP@acme.test');
  await submit(page, page.getByRole('button', { name: 'Save recipients' }));
  expect(await page.getByRole('alert').textContent()).toContain('AP@acme.test is listed twice.');
  expect((await get(`/clients/${clientId}/recipients`)).recipients).toHaveLength(1);
  await checkBothSizes(page, 'ops-setup-client');
}, 60_000);

it('invites a client user of the client, resends and revokes the invitation; changes the member’s role and back', async () => {
  await page.goto(`${app.base}/ops/setup/people`);
  const email = 'carl.client@acme.test';
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Name', { exact: true }).fill('Carl Client');
  await page.locator('#invite-role').selectOption('client_elevated');
  // a client role without the client is the operation's 400, shown in the page
  await submit(page, page.getByRole('button', { name: 'Send invitation' }));
  expect(await page.getByRole('alert').textContent()).toContain('A client role needs the client');
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Name', { exact: true }).fill('Carl Client');
  await page.locator('#invite-role').selectOption('client_elevated');
  await page.locator('#invite-client').selectOption(clientId);
  await submit(page, page.getByRole('button', { name: 'Send invitation' }));
  expect(await notice()).toContain(`an email is on its way to ${email}`);
  await submit(page, page.getByRole('button', { name: `Resend to ${email}` }));
  expect(await notice()).toContain(`The invitation to ${email} is sent again.`);
  await submit(page, page.getByRole('button', { name: `Revoke ${email}` }));
  expect(await notice()).toContain(`The invitation to ${email} is revoked.`);
  expect((await get('/invitations')).invitations).toContainEqual(expect.objectContaining({ email, role: 'client_elevated', clientId, state: 'revoked' }));

  const roleOf = page.getByRole('combobox', { name: 'Role of Mia <b>Member</b>' });
  await roleOf.selectOption('admin');
  await submit(page, page.getByRole('button', { name: 'Change role of Mia <b>Member</b>' }));
  expect(await notice()).toContain('Role changed: member → admin.');
  expect((await get(`/people?q=mia.member`)).people).toMatchObject([{ id: memberId, role: 'admin' }]);
  await page.getByRole('combobox', { name: 'Role of Mia <b>Member</b>' }).selectOption('member');
  await submit(page, page.getByRole('button', { name: 'Change role of Mia <b>Member</b>' }));
  expect((await get(`/people?q=mia.member`)).people).toMatchObject([{ id: memberId, role: 'member' }]);
  await checkBothSizes(page, 'ops-setup-people');
}, 60_000);

it('creates a consultant category', async () => {
  await page.goto(`${app.base}/ops/setup/categories`);
  await page.getByLabel('Name', { exact: true }).fill('Senior developer');
  await submit(page, page.getByRole('button', { name: 'Create category' }));
  expect(await notice()).toContain('Category Senior developer is created.');
  const { categories } = await get('/categories');
  expect(categories).toMatchObject([{ name: 'Senior developer' }]);
  categoryId = categories[0].id;
  await checkBothSizes(page, 'ops-setup-categories');
}, 60_000);

it('creates a project billed to the client and adds the member with the category', async () => {
  await page.goto(`${app.base}/ops/setup/projects`);
  await page.getByLabel(/^Key/).fill('web');
  await page.getByLabel('Name', { exact: true }).fill('Website relaunch');
  await page.locator('#new-client').selectOption(clientId);
  await submit(page, page.getByRole('button', { name: 'Create project' }));
  expect(await notice()).toContain('Project WEB is created');
  projectId = new URL(page.url()).pathname.split('/').at(-1)!;
  expect(await get(`/projects/${projectId}`)).toMatchObject({ key: 'WEB', name: 'Website relaunch', billingClientId: clientId, collaboratorIds: [] });

  await page.locator('#add-person').selectOption(memberId);
  await page.locator('#add-access').selectOption('full');
  await page.locator('#add-category').selectOption(categoryId);
  await submit(page, page.getByRole('button', { name: 'Add member' }));
  expect(await notice()).toContain('is a member (full)');
  expect((await get(`/projects/${projectId}/members`)).members).toEqual([
    expect.objectContaining({ identityId: memberId, access: 'full', manager: false, categoryId }),
  ]);
  expect(await page.getByRole('table', { name: 'Project members by name' }).textContent()).toContain('Mia <b>Member</b>');
  await checkBothSizes(page, 'ops-setup-project');
  await page.goto(`${app.base}/ops/setup/projects`);
  await checkBothSizes(page, 'ops-setup-projects');
}, 60_000);

it('adds a workflow label', async () => {
  await page.goto(`${app.base}/ops/setup/workflow`);
  await page.getByLabel('Name', { exact: true }).last().fill('Needs review');
  await page.getByLabel(/^Colour \(#rrggbb, optional\)/).fill('#aa3300');
  await submit(page, page.getByRole('button', { name: 'Add label' }));
  expect(await notice()).toContain('Label Needs review is added.');
  expect((await get('/workflow')).labels).toContainEqual(expect.objectContaining({ name: 'Needs review', color: '#aa3300' }));
  await checkBothSizes(page, 'ops-setup-workflow');
  // a new state, then deleted: no ticket uses it, so no target is needed
  await page.getByLabel(/^Key/).first().fill('waiting_on_client');
  await page.getByLabel('Name', { exact: true }).first().fill('Waiting on client');
  await submit(page, page.getByRole('button', { name: 'Add state' }));
  expect(await notice()).toContain('State Waiting on client is added.');
  expect((await get('/workflow')).states).toContainEqual(expect.objectContaining({ key: 'waiting_on_client', category: 'open', isDefault: false }));
  await submit(page, page.getByRole('button', { name: 'Delete Waiting on client' }));
  expect(await notice()).toContain('The state is deleted.');
  expect((await get('/workflow')).states.map((s: { key: string }) => s.key)).not.toContain('waiting_on_client');
}, 60_000);

it('changes the workspace’s settings on the Settings page, read back through REST', async () => {
  await page.goto(`${app.base}/ops/setup/people`);
  await page.getByRole('navigation', { name: 'Setup' }).getByRole('link', { name: 'Settings' }).click();
  await page.waitForURL('**/ops/setup/settings');
  expect(await page.getByRole('navigation', { name: 'Setup' }).getByRole('link', { name: 'Settings' }).getAttribute('aria-current')).toBe('page');
  const before = await get('/settings');
  expect(await page.getByLabel(/^Name/).inputValue()).toBe(before.name);
  await page.getByLabel(/^Sender name of emails/).fill('Acme <Agency> & Co');
  await page.getByLabel(/^Reply-To/).fill('office@agency.test');
  await page.getByLabel(/^Default weekly target/).fill('38.5');
  await submit(page, page.getByRole('button', { name: 'Save settings' }));
  expect(await notice()).toContain('The settings are saved.');
  expect(await get('/settings')).toMatchObject({
    name: before.name,
    defaultTimezone: before.defaultTimezone,
    defaultWeeklyTargetMinutes: 2310,
    mailFromName: 'Acme <Agency> & Co',
    mailReplyTo: 'office@agency.test',
  });
  // escaped: the value comes back as typed, no markup in the page
  expect(await page.getByLabel(/^Sender name of emails/).inputValue()).toBe('Acme <Agency> & Co');
  // the operation's rules hold in the form: an unknown time zone is refused, nothing changes
  await page.getByLabel(/^Default time zone/).fill('Mars/Olympus');
  await submit(page, page.getByRole('button', { name: 'Save settings' }));
  expect(await page.getByRole('alert').textContent()).toContain('IANA time zone');
  expect((await get('/settings')).defaultTimezone).toBe(before.defaultTimezone);
  // emptied, the sender name goes back to the server's
  await page.goto(`${app.base}/ops/setup/settings`);
  await page.getByLabel(/^Sender name of emails/).fill('');
  await submit(page, page.getByRole('button', { name: 'Save settings' }));
  expect((await get('/settings')).mailFromName).toBeNull();
  await page.getByLabel(/^Sender name of emails/).fill('Agency team');
  await submit(page, page.getByRole('button', { name: 'Save settings' }));
  expect((await get('/settings')).mailFromName).toBe('Agency team');
  await checkBothSizes(page, 'ops-setup-settings');
}, 60_000);

it('sets a member’s time zone, weekly target and category on their page, read back through REST', async () => {
  await page.goto(`${app.base}/ops/setup/people`);
  await submit(page, page.getByRole('table', { name: 'People of the workspace' }).getByRole('link', { name: 'Mia <b>Member</b>' }));
  await page.waitForURL(`**/ops/setup/people/${memberId}`);
  await page.getByLabel(/^Time zone/).fill('America/New_York');
  await page.getByLabel(/^Weekly target/).fill('20');
  await page.getByLabel('Default category').selectOption(categoryId);
  await submit(page, page.getByRole('button', { name: 'Save time settings' }));
  expect(await notice()).toContain('The time settings of Mia <b>Member</b> are saved.');
  expect(await page.locator('main b').count()).toBe(0);
  const week = await get(`/time?from=2026-01-05&to=2026-01-11&userId=${memberId}`);
  expect(week).toMatchObject({ userId: memberId, timezone: 'America/New_York', expectedWeekMinutes: 1200 });
  // the default category has no REST read of its own: the membership row holds it
  const [membership] = await app.db.sql`select category_id from memberships where identity_id = ${memberId}`;
  expect(membership!.category_id).toBe(categoryId);
  expect(await page.getByLabel(/^Time zone/).inputValue()).toBe('America/New_York');
  // refused by the operation, shown in the page, nothing changed
  await page.getByLabel(/^Time zone/).fill('Nowhere/Else');
  await submit(page, page.getByRole('button', { name: 'Save time settings' }));
  expect(await page.getByRole('alert').textContent()).toContain('IANA timezone');
  expect((await get(`/time?from=2026-01-05&to=2026-01-11&userId=${memberId}`)).timezone).toBe('America/New_York');
  // a target that is no whole quarter hour (set through REST) shows as 33.33 h and saves back unchanged
  expect((await app.call('PATCH', api(`/members/${memberId}`), { session, body: { weeklyTargetMinutes: 2000 } })).status).toBe(200);
  await page.goto(`${app.base}/ops/setup/people/${memberId}`);
  expect(await page.getByLabel(/^Weekly target/).inputValue()).toBe('33.33');
  await submit(page, page.getByRole('button', { name: 'Save time settings' }));
  expect(await notice()).toContain('are saved');
  expect((await get(`/time?from=2026-01-05&to=2026-01-11&userId=${memberId}`)).expectedWeekMinutes).toBe(2000);
  await checkBothSizes(page, 'ops-setup-member');
}, 60_000);

/** The first day of the month before today's (UTC): a period that is over, so it can be closed and billed. */
function firstOfLastMonth(): string {
  const d = new Date();
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1)).toISOString().slice(0, 10);
}

it('opens and closes a period on the Periods page, bills it from Billing, and the recipient receives the timesheet', async () => {
  const start = firstOfLastMonth();
  await page.goto(`${app.base}/ops/setup/periods`);
  expect(await page.getByText('No period yet.').count()).toBe(1);
  await page.getByLabel('First day').fill(start);
  await submit(page, page.getByRole('button', { name: 'Open the first period' }));
  expect(await notice()).toContain(`Period ${start}`);
  expect((await get('/periods')).periods).toEqual([expect.objectContaining({ periodStart: start, closedAt: null })]);

  // the member's work in that period, through REST as a member logs it
  const member = await login(app, memberEmail, 'a long passphrase for mia');
  const ticket = await app.call('POST', api('/tickets'), { session: member, body: { projectId, title: 'Landing page' } });
  expect(ticket.status, JSON.stringify(ticket.body)).toBe(201);
  const logged = await app.call('POST', api('/time'), { session: member, body: { ticketId: ticket.body.id, spentOn: start, minutes: 90 } });
  expect(logged.status, JSON.stringify(logged.body)).toBe(201);

  await submit(page, page.getByRole('button', { name: `Close ${start}` }));
  expect(await notice()).toContain('is closed and can be billed');
  expect(await page.getByRole('button', { name: `Reopen ${start}` }).count()).toBe(1);
  await checkBothSizes(page, 'ops-setup-periods');

  // Billing: the closed period is offered; preview, start, approve, and the recipient gets one email
  await page.goto(`${app.base}/ops/billing`);
  await page.getByRole('button', { name: 'Preview' }).click();
  await page.waitForURL('**/ops/billing/new?**');
  await page.getByRole('button', { name: /Start the run: 1 entr/ }).click();
  await page.waitForURL('**/ops/billing/runs/**');
  const runId = new URL(page.url()).pathname.split('/').at(-1)!;
  await page.getByRole('button', { name: 'Approve and send' }).waitFor({ timeout: 60_000 });
  expect(smtp.messagesTo('ap@acme.test')).toHaveLength(0);
  await page.getByLabel('Type SEND to confirm').fill('SEND');
  await submit(page, page.getByRole('button', { name: 'Approve and send' }));
  await page.locator('li[data-delivery] .state-sent').first().waitFor({ timeout: 60_000 });
  const [doc] = await app.db.sql<{ number: string }[]>`select number from timesheets where run_id = ${runId}`;
  expect(doc?.number).toMatch(/^ACME-\d{4}-0001$/);
  const sent = smtp.messagesTo('ap@acme.test');
  expect(sent).toHaveLength(1);
  expect(`${sent[0]!.subject} ${sent[0]!.text}`).toContain(doc!.number);
  // billed: the period can no longer be reopened
  await page.goto(`${app.base}/ops/setup/periods`);
  await submit(page, page.getByRole('button', { name: `Reopen ${start}` }));
  expect(await page.getByRole('alert').textContent()).toContain('void the billing run first');
}, 120_000);

it('names every write on the audit page with the console’s door', async () => {
  await page.goto(`${app.base}/ops/audit`);
  const rows = await page.locator('tbody tr').allTextContents();
  for (const action of [
    'invitation.create',
    'member.deactivate',
    'member.reactivate',
    'member.role',
    'invitation.resend',
    'invitation.revoke',
    'workflow.states.create',
    'workflow.states.delete',
    'clients.create',
    'clients.recipients.set',
    'categories.create',
    'projects.create',
    'projects.members.set',
    'workflow.labels.create',
    'settings.update',
    'periods.open',
    'periods.close',
    'billing.run.start',
  ]) {
    expect(
      rows.some((r) => r.includes(action) && r.includes('console') && r.includes('succeeded')),
      action,
    ).toBe(true);
  }
  // the refused recipient set is recorded too
  expect(rows.some((r) => r.includes('clients.recipients.set') && r.includes('failed'))).toBe(true);
}, 60_000);

it('shows Setup to Owners and Admins only: a billing operator neither sees it nor reads its pages', async () => {
  const operator = await makeUser(app.db.sql, ws, { role: 'member', name: 'Bea Billing' });
  await app.db.sql`update memberships set billing_operator = true where identity_id = ${operator.id}`;
  const c = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const p = await c.newPage();
  await p.goto(`${app.base}/ops/jobs`);
  await p.getByLabel('Email').fill(operator.email);
  await p.getByLabel('Password').fill(operator.password);
  await Promise.all([p.waitForNavigation(), p.getByRole('button', { name: 'Sign in' }).click()]);
  await p.waitForURL('**/ops/jobs');
  expect(await p.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Setup' }).count()).toBe(0);
  const csrf = await p.locator('meta[name=csrf-token]').getAttribute('content');
  expect(csrf).toBeTruthy();
  const res = await p.goto(`${app.base}/ops/setup/people`);
  expect(res!.status()).toBe(403);
  const status = await p.evaluate(
    async ([url, token]) =>
      (
        await fetch(url!, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `_csrf=${token}&name=Sneaky`,
        })
      ).status,
    [`${app.base}/ops/setup/categories`, csrf],
  );
  expect(status).toBe(403);
  expect((await get('/categories')).categories).toHaveLength(1);
  await c.close();
}, 60_000);
