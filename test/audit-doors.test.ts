import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { allocateRun } from '../src/core/billing/allocate.ts';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { cleanEnv, runToEnd } from './helpers/spawn.ts';
import { drainBillingJobs, jobCtx, makeBillingWorld, type BillingWorld } from './billing-world.ts';

/**
 * Issue 19, "every door names its audit": a void, a resend and a role change are recorded by the
 * core operation in the one audit log, with the door they came through (REST, the console, the
 * CLI), and the console's audit page shows the door.
 */
let app: TestApp;
let w: BillingWorld;
/** The run the resends were made on: the REST void's. */
let resentRun: string;
const wt = path.resolve('bin/wt.js');
const cli = (...args: string[]) => runToEnd('node', [wt, ...args], cleanEnv({ DATABASE_URL: app.db.url, LOG_LEVEL: 'silent' }));

beforeAll(async () => {
  app = await startTestApp();
  w = await makeBillingWorld(app);
}, 60_000);
afterAll(() => app.close());

const audit = (action: string) =>
  app.db.sql<{ door: string; outcome: string; target: string; actor_name: string }[]>`
    select door, outcome, target, actor_name from ops_audit where workspace_id = ${w.ws.id} and action = ${action} order by id`;

/** A console form post with the session's cookie and CSRF token, as the browser sends it. */
async function consolePost(session: SessionCookie, path: string, form: Record<string, string>): Promise<Response> {
  return fetch(app.base + path, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded', origin: app.base },
    body: new URLSearchParams({ _csrf: session.csrfToken, ...form }).toString(),
  });
}

async function renderedRun(): Promise<string> {
  const res = await app.call('POST', `/api/w/${w.ws.slug}/billing/runs`, { session: w.session, body: { periodId: w.october.id } });
  expect(res.status).toBe(201);
  await allocateRun(jobCtx(app.db.sql), { runId: res.body.id });
  await drainBillingJobs(app.db.sql, jobCtx(app.db.sql));
  return res.body.id;
}

it('records a resend through REST, the console and the CLI, each with its door', async () => {
  const runId = (resentRun = await renderedRun());
  const deliveries = await app.db.sql<{ id: string; documentId: string }[]>`
    update document_deliveries dd set state = 'failed', detail = 'refused by the test'
    from timesheets s where s.id = dd.timesheet_id and s.run_id = ${runId}
    returning dd.id, (select d.id from documents d where d.timesheet_id = dd.timesheet_id order by d.format limit 1) as "documentId"`;
  expect(deliveries.length).toBeGreaterThanOrEqual(3);
  const [viaRest, viaConsole, viaCli] = deliveries;

  const rest = await app.call('POST', `/api/w/${w.ws.slug}/documents/${viaRest!.documentId}/deliveries/${viaRest!.id}/resend`, { session: w.session });
  expect(rest.status).toBe(202);
  expect((await consolePost(w.session, '/ops/billing/deliveries/resend', { deliveryId: viaConsole!.id })).status).toBe(303);
  const out = await cli('delivery', 'resend', '--workspace', w.ws.slug, '--document', viaCli!.documentId, '--delivery', viaCli!.id);
  expect(out.code, out.stderr).toBe(0);

  const rows = await audit('delivery.resend');
  expect(rows.map((r) => [r.door, r.outcome, r.target])).toEqual([
    ['rest', 'succeeded', `delivery ${viaRest!.id}`],
    ['console', 'succeeded', `delivery ${viaConsole!.id}`],
    ['cli', 'succeeded', `delivery ${viaCli!.id}`],
  ]);
  // a refusal through REST is recorded too (one row per action, never a second from the console's wrapper)
  const member = await app.call('POST', `/api/w/${w.ws.slug}/documents/${viaRest!.documentId}/deliveries/${viaRest!.id}/resend`, {
    session: await memberSession(),
  });
  expect(member.status).toBe(403);
  expect((await audit('delivery.resend')).map((r) => [r.door, r.outcome])).toEqual([
    ['rest', 'succeeded'],
    ['console', 'succeeded'],
    ['cli', 'succeeded'],
    ['rest', 'refused'],
  ]);
}, 120_000);

it('records a void through REST, the console and the CLI, each with its door, and the audit page shows it', async () => {
  const first = resentRun;
  expect((await app.call('POST', `/api/w/${w.ws.slug}/billing/runs/${first}/void`, { session: w.session, body: { reason: 'Wrong rates' } })).status).toBe(200);
  const second = await renderedRun();
  const voided = await consolePost(w.session, `/ops/billing/runs/${second}/void`, { reason: 'Wrong rates', confirmation: 'VOID', password: w.owner.password });
  expect(voided.status).toBe(303);
  expect(voided.headers.get('location')).toContain('msg=The+run+was+voided');
  const third = await renderedRun();
  const out = await cli('billing', 'void', '--workspace', w.ws.slug, '--run', third, '--reason', 'Wrong rates');
  expect(out.code, out.stderr).toBe(0);
  expect(JSON.parse(out.stdout)).toMatchObject({ id: third, status: 'voided' });

  expect((await audit('billing.run.void')).map((r) => [r.door, r.outcome, r.target])).toEqual([
    ['rest', 'succeeded', `run ${first}`],
    ['console', 'succeeded', `run ${second}`],
    ['cli', 'succeeded', `run ${third}`],
  ]);

  const page = await fetch(`${app.base}/ops/audit`, { headers: { cookie: w.session.cookie } });
  const text = await page.text();
  expect(page.status).toBe(200);
  expect(text).toContain('<th scope="col">Door</th>');
  for (const door of ['rest', 'console', 'cli']) expect(text).toMatch(new RegExp(`<td[^>]*>${door}</td>`));
}, 120_000);

it('records a role change through the CLI with its door, and the re-added client loses the billing-operator flag', async () => {
  await app.db.sql`update memberships set billing_operator = true where workspace_id = ${w.ws.id} and identity_id = ${w.member.id}`;
  const out = await cli('user', 'role', '--workspace', w.ws.slug, '--email', w.member.email, '--role', 'client', '--client', 'ACME');
  expect(out.code, out.stderr).toBe(0);
  expect(JSON.parse(out.stdout)).toMatchObject({ previousRole: 'member', role: 'client', billingOperator: false });
  const rows = await audit('member.role');
  expect(rows.map((r) => [r.door, r.outcome, r.target])).toEqual([['cli', 'succeeded', `identity ${w.member.id}`]]);
  // `wt user create` for a member already there with another role is the same audited change
  const back = await cli('user', 'create', '--workspace', w.ws.slug, '--email', w.member.email, '--name', 'Maya Member', '--role', 'member');
  expect(back.code, back.stderr).toBe(0);
  expect((await audit('member.role')).map((r) => [r.door, r.outcome])).toEqual([
    ['cli', 'succeeded'],
    ['cli', 'succeeded'],
  ]);
  const [m] = await app.db.sql`select role, billing_operator from memberships where workspace_id = ${w.ws.id} and identity_id = ${w.member.id}`;
  expect(m).toEqual({ role: 'member', billing_operator: false });
}, 60_000);

const memberSession = () => login(app, w.member.email, w.member.password);
