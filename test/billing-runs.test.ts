import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allocateRun } from '../src/core/billing/allocate.ts';
import { login, startTestApp, type TestApp } from './helpers/app.ts';
import { makeToken } from './helpers/factories.ts';
import { jobCtx, makeBillingWorld, type BillingWorld } from './billing-world.ts';

let app: TestApp;
let w: BillingWorld;
const path = (p: string) => `/api/w/${w.ws.slug}${p}`;
const post = (p: string, body: unknown, session = w.session) => app.call('POST', path(p), { session, body });
const get = (p: string, session = w.session) => app.call('GET', path(p), { session });

async function allocate(runId: string) {
  await allocateRun(jobCtx(app.db.sql), { runId });
}

const billedRunOf = async (ids: string[]) =>
  app.db.sql<{ id: string; billed: boolean; run: string | null }[]>`
    select id, billed, billing_run_id as run from time_entries where id = any(${ids}::uuid[]) order by id`;

beforeAll(async () => {
  app = await startTestApp();
  w = await makeBillingWorld(app);
});
afterAll(() => app.close());

describe('POST /billing/runs', () => {
  it('refuses a token (session only), a member (admin only), bad bodies, unknown and open periods', async () => {
    const token = (await makeToken(app.db.sql, w.ws, w.owner)).token;
    const byToken = await app.call('POST', path('/billing/runs'), { token, body: { periodId: w.october.id } });
    expect([byToken.status, byToken.body.error.details.reason]).toEqual([403, 'session_required']);
    const member = await login(app, w.member.email, w.member.password);
    const byMember = await post('/billing/runs', { periodId: w.october.id }, member);
    expect([byMember.status, byMember.body.error.details.reason]).toEqual([403, 'admin_only']);
    expect((await post('/billing/runs', { periodId: 'nope' })).status).toBe(400);
    expect((await post('/billing/runs', { periodId: w.october.id, dryRun: 'yes' })).status).toBe(400);
    const unknown = await post('/billing/runs', { periodId: '00000000-0000-4000-8000-000000000000' });
    expect([unknown.status, unknown.body.error.details.reason]).toEqual([404, 'unknown_period']);
    const open = await post('/billing/runs', { periodId: w.november.id });
    expect([open.status, open.body.error.details.reason]).toEqual([409, 'period_open']);
    expect((await app.db.sql`select 1 from billing_runs where workspace_id = ${w.ws.id}`).length).toBe(0);
  });

  it('previews with dryRun exactly the entries the run then bills, writing nothing', async () => {
    const res = await post('/billing/runs', { periodId: w.october.id, dryRun: true });
    expect(res.status).toBe(200);
    const preview = res.body;
    expect(preview).toMatchObject({ dryRun: true, periodStart: '2026-10-01', periodEnd: '2026-10-31', entryCount: w.billable.length });
    const previewIds = preview.clients.flatMap((c: any) => c.projects.flatMap((p: any) => p.entryIds)).sort();
    expect(previewIds).toEqual([...w.billable].sort());
    const acme = preview.clients.find((c: any) => c.clientId === w.acme.id);
    expect(acme).toMatchObject({ entryCount: 4, minutes: 285, billableMinutes: 120, freeMinutes: 45, bankMinutes: 120 });
    expect(acme.banks).toEqual([{ bankId: w.bank.id, name: 'Prepaid', minutes: 120 }]);
    expect(acme.documents).toEqual([{ scope: 'combined', projectId: null }]);
    const initech = preview.clients.find((c: any) => c.clientId === w.initech.id);
    expect(initech).toMatchObject({ entryCount: 3, minutes: 240, billableMinutes: 240 });
    expect(initech.documents.map((d: any) => d.scope)).toEqual(['project', 'project']);
    expect((await app.db.sql`select 1 from billing_runs where workspace_id = ${w.ws.id}`).length).toBe(0);
    expect((await billedRunOf(w.billable)).every((e) => !e.billed)).toBe(true);

    const started = await post('/billing/runs', { periodId: w.october.id });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ status: 'allocating', dryRun: false, entryCount: 0, periodId: w.october.id });
    await allocate(started.body.id);
    const run = (await get(`/billing/runs/${started.body.id}`)).body;
    expect(run).toMatchObject({ status: 'rendering', entryCount: preview.entryCount, minutes: preview.minutes, billableMinutes: preview.billableMinutes });
    expect(run.clients).toEqual(preview.clients.map(({ projects: _p, banks: _b, documents: _d, ...totals }: any) => totals));
    const billed = await billedRunOf(w.billable);
    expect(billed.every((e) => e.billed && e.run === run.id)).toBe(true);
    expect((await billedRunOf(w.untouched)).every((e) => !e.billed && e.run === null)).toBe(true);
    const numbers = await app.db.sql<{ number: string; scope: string }[]>`
      select number, scope from timesheets where run_id = ${run.id} order by number`;
    expect(numbers).toEqual([
      { number: 'ACME-2026-0001', scope: 'combined' },
      { number: 'INI-2026-0001', scope: 'project' },
      { number: 'INI-2026-0002', scope: 'project' },
    ]);

    // the same period again: nothing left to bill
    const again = await post('/billing/runs', { periodId: w.october.id });
    expect([again.status, again.body.error.details.reason]).toEqual([409, 'nothing_to_bill']);
    // and says which run billed it (issue 26)
    expect(again.body.error.details).toMatchObject({ periodId: w.october.id, runId: run.id, runCreatedAt: run.createdAt });
    expect(again.body.error.message).toContain(run.id);
  });

  it('lists runs newest first with a cursor, and a run’s exact entry set page by page', async () => {
    const list = await get('/billing/runs?limit=1');
    expect(list.status).toBe(200);
    expect(list.body.items).toHaveLength(1);
    const runId = list.body.items[0].id;
    const first = await get(`/billing/runs/${runId}/entries?limit=4`);
    expect(first.body.items).toHaveLength(4);
    const second = await get(`/billing/runs/${runId}/entries?limit=4&cursor=${first.body.nextCursor}`);
    expect(second.body.nextCursor).toBeNull();
    const all = [...first.body.items, ...second.body.items].map((e: any) => e.entryId);
    expect(all.sort()).toEqual([...w.billable].sort());
    expect((await get(`/billing/runs/${runId}/entries?cursor=xyz`)).body.error.details.reason).toBe('bad_cursor');
    expect((await get('/billing/runs?cursor=WyJ4Il0')).body.error.details.reason).toBe('bad_cursor');
    expect((await get('/billing/runs/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await get('/billing/runs/not-a-uuid')).status).toBe(400);
  });

  it('voids a run: entries unbilled, bank returned, documents voided; a second void is 409; a new run bills again with new numbers', async () => {
    const runId = (await get('/billing/runs')).body.items[0].id;
    expect((await post(`/billing/runs/${runId}/void`, { reason: 'x' })).status).toBe(400);
    const voided = await post(`/billing/runs/${runId}/void`, { reason: 'Wrong rates' });
    expect(voided.status).toBe(200);
    expect(voided.body).toMatchObject({ status: 'voided', voidReason: 'Wrong rates', voidedBy: w.owner.id });
    expect((await billedRunOf(w.billable)).every((e) => !e.billed && e.run === null)).toBe(true);
    const again = await post(`/billing/runs/${runId}/void`, { reason: 'Twice' });
    expect([again.status, again.body.error.details.reason]).toEqual([409, 'run_voided']);

    const second = await post('/billing/runs', { periodId: w.october.id });
    expect(second.status).toBe(201);
    await allocate(second.body.id);
    const numbers = await app.db.sql<{ number: string }[]>`select number from timesheets where run_id = ${second.body.id} order by number`;
    expect(numbers.map((n) => n.number)).toEqual(['ACME-2026-0002', 'INI-2026-0003', 'INI-2026-0004']);
    expect((await billedRunOf(w.billable)).every((e) => e.billed && e.run === second.body.id)).toBe(true);
  });

  it('refuses to start while another run allocates, and to void an allocating run', async () => {
    await app.db.sql`update time_entries set billable = true where id = ${w.untouched[0]!}`;
    const run = await post('/billing/runs', { periodId: w.october.id });
    expect(run.status).toBe(201);
    const busy = await post('/billing/runs', { periodId: w.october.id });
    expect([busy.status, busy.body.error.details.reason]).toEqual([409, 'run_in_progress']);
    const early = await post(`/billing/runs/${run.body.id}/void`, { reason: 'too early' });
    expect([early.status, early.body.error.details.reason]).toEqual([409, 'run_allocating']);
    await allocate(run.body.id);
    expect((await get(`/billing/runs/${run.body.id}`)).body.entryCount).toBe(1);
  });
});
