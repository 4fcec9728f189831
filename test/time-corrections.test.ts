import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login } from './helpers/app.ts';
import { makeCategory, makePeriod, makeProject, makeTicket, makeTimeEntry, makeUser, makeWorkspace } from './helpers/factories.ts';
import { expectError, START, timeWorld, type TimeWorld } from './time-world.ts';

let w: TimeWorld;
let base: string;

beforeAll(async () => {
  w = await timeWorld();
  base = `/api/w/${w.ws.slug}/time`;
});
afterAll(() => w.app.close());

const entry = (opts: Partial<Parameters<typeof makeTimeEntry>[2]> & { spentOn: string }) =>
  makeTimeEntry(w.app.db.sql, w.ws, { ticketId: w.ticket.id, userId: w.member.id, ...opts });
const row = async (id: string) => (await w.app.db.sql`select *, spent_on::text as day from time_entries where id = ${id}`)[0];
const correct = async (id: string, body: unknown, who = w.admin) => w.app.call('POST', `${base}/${id}/corrections`, { session: await w.session(who), body });

describe('POST /time/{id}/corrections', () => {
  it('creates a signed entry dated today, inheriting author and attribution from the original', async () => {
    const cat = await makeCategory(w.app.db.sql, w.ws);
    const original = await entry({ spentOn: '2024-04-10', minutes: 60, billable: false, billingClientId: w.clients.collab, categoryId: cat.id });
    const res = await correct(original.id, { minutes: -15, note: 'Double-counted meeting', startedAt: '16:00' });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['id']);
    expect(await row(res.body.id)).toMatchObject({
      user_id: w.member.id,
      ticket_id: w.ticket.id,
      project_id: w.project.id,
      billing_client_id: w.clients.collab,
      category_id: cat.id,
      billable: false,
      minutes: -15,
      note: 'Double-counted meeting',
      started_at: '16:00:00',
      day: '2024-05-15',
      period_id: w.periods.may,
      corrects_entry_id: original.id,
      timezone: 'UTC',
      created_by: w.admin.id,
    });
    const [ev] = await w.app.db.sql`select payload, actor_id from ticket_events where kind = 'time_corrected' and payload->>'entryId' = ${res.body.id}`;
    expect(ev).toEqual({ actor_id: w.admin.id, payload: { entryId: res.body.id, correctsEntryId: original.id, minutes: -15, spentOn: '2024-05-15' } });
    const week = await w.app.call('GET', `${base}?from=2024-05-15&to=2024-05-15`, { token: await w.token(w.member) });
    expect(week.body.entries).toContainEqual(expect.objectContaining({ id: res.body.id, minutes: -15, correctsEntryId: original.id, userId: w.member.id }));
  });

  it("is dated today in the caller's timezone", async () => {
    const sql = w.app.db.sql;
    const kiwi = await makeUser(sql, w.ws, { role: 'admin', timezone: 'Pacific/Auckland' });
    const original = await entry({ spentOn: '2024-04-11', minutes: 30 });
    w.clock.now = new Date('2024-05-15T13:00:00Z'); // 16 May 01:00 in Auckland
    try {
      const session = await login(w.app, kiwi.email, kiwi.password);
      const res = await w.app.call('POST', `${base}/${original.id}/corrections`, { session, body: { minutes: 5 } });
      expect(res.status).toBe(201);
      expect(await row(res.body.id)).toMatchObject({ day: '2024-05-16', timezone: 'Pacific/Auckland', user_id: w.member.id });
    } finally {
      w.clock.now = new Date(START);
    }
  });

  it('corrects a billed entry (which itself never changes)', async () => {
    const original = await entry({ spentOn: '2024-04-12', minutes: 60, billed: true });
    const res = await correct(original.id, { minutes: -60 }, w.owner);
    expect(res.status).toBe(201);
    expect(await row(original.id)).toMatchObject({ minutes: 60, billed: true });
  });

  it('403 for a token, a member, and client users', async () => {
    const original = await entry({ spentOn: '2024-04-10' });
    expectError(
      await w.app.call('POST', `${base}/${original.id}/corrections`, { token: await w.token(w.owner), body: { minutes: 5 } }),
      403,
      'forbidden',
      'session_required',
    );
    expectError(await correct(original.id, { minutes: 5 }, w.member), 403, 'forbidden');
    for (const who of [w.client, w.elevated]) expectError(await correct(original.id, { minutes: 5 }, who), 403, 'forbidden');
  });

  it('400 correction_source for an entry of an open period, or a correction', async () => {
    const open = await entry({ spentOn: '2024-05-10' });
    expectError(await correct(open.id, { minutes: 5 }), 400, 'invalid', 'correction_source');
    const original = await entry({ spentOn: '2024-04-10' });
    const first = await correct(original.id, { minutes: 5 });
    expectError(await correct(first.body.id, { minutes: 5 }), 400, 'invalid', 'correction_source');
    // a correction that itself lies in a closed period is still no source
    const old = await entry({ spentOn: '2024-04-20', minutes: -5, correctsEntryId: original.id });
    expectError(await correct(old.id, { minutes: 5 }), 400, 'invalid', 'correction_source');
  });

  it('400 for zero, missing or non-integer minutes; 404 for an unknown entry', async () => {
    const original = await entry({ spentOn: '2024-04-10' });
    for (const body of [{ minutes: 0 }, {}, { minutes: 1.5 }, { minutes: 5, note: 'x'.repeat(10_001) }, { minutes: 5, startedAt: 'noon' }]) {
      expectError(await correct(original.id, body), 400, 'invalid', 'validation');
    }
    expectError(await correct('00000000-0000-4000-8000-000000000006', { minutes: 5 }), 404, 'not_found');
  });

  it('400 net_negative when the running net would go below zero', async () => {
    const original = await entry({ spentOn: '2024-04-13', minutes: 60 });
    expectError(await correct(original.id, { minutes: -61 }), 400, 'invalid', 'net_negative');
    expect((await correct(original.id, { minutes: 20 })).status).toBe(201);
    expect((await correct(original.id, { minutes: -80 })).status).toBe(201);
    expectError(await correct(original.id, { minutes: -1 }), 400, 'invalid', 'net_negative');
    const [n] = await w.app.db.sql`select sum(minutes)::int as net from time_entries where id = ${original.id} or corrects_entry_id = ${original.id}`;
    expect(n!.net).toBe(0);
  });

  it('keeps the net at zero or above under concurrent corrections', async () => {
    const original = await entry({ spentOn: '2024-04-14', minutes: 60 });
    const session = await w.session(w.admin);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => w.app.call('POST', `${base}/${original.id}/corrections`, { session, body: { minutes: -10 } })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(6);
    for (const r of results.filter((x) => x.status !== 201)) expectError(r, 400, 'invalid', 'net_negative');
    const [n] = await w.app.db.sql`select sum(minutes)::int as net from time_entries where id = ${original.id} or corrects_entry_id = ${original.id}`;
    expect(n!.net).toBe(0);
  });

  it("409 today_period_closed when today's period is closed", async () => {
    const original = await entry({ spentOn: '2024-04-15' });
    await w.app.db.sql`update periods set closed_at = now(), closed_by = ${w.owner.id} where id = ${w.periods.may}`;
    try {
      expectError(await correct(original.id, { minutes: 5 }), 409, 'conflict', 'today_period_closed');
    } finally {
      await w.app.db.sql`update periods set closed_at = null, closed_by = null where id = ${w.periods.may}`;
    }
    const [n] = await w.app.db.sql`select count(*)::int as n from time_entries where corrects_entry_id = ${original.id}`;
    expect(n!.n).toBe(0);
  });
});

describe('a period boundary on a daylight-saving change', () => {
  it('dates a correction by Berlin summer time on the night the clocks go forward (31 March 2024)', async () => {
    const sql = w.app.db.sql;
    const ws = await makeWorkspace(sql);
    const berlin = await makeUser(sql, ws, { role: 'owner', timezone: 'Europe/Berlin' });
    const dev = await makeUser(sql, ws, { role: 'member' });
    const project = await makeProject(sql, ws, { members: [{ person: dev }] });
    const ticket = await makeTicket(sql, ws, { projectId: project.id });
    await makePeriod(sql, ws, { start: '2024-02-01', end: '2024-02-29', closed: true, closedBy: berlin.id });
    const march = await makePeriod(sql, ws, { start: '2024-03-01', end: '2024-03-31', closed: true, closedBy: berlin.id });
    const april = await makePeriod(sql, ws, { start: '2024-04-01', end: '2024-04-30' });
    const original = await makeTimeEntry(sql, ws, { ticketId: ticket.id, userId: dev.id, spentOn: '2024-02-20', minutes: 120 });
    const url = `/api/w/${ws.slug}/time/${original.id}/corrections`;
    try {
      // 21:30 UTC is 23:30 CEST on 31 March: still March, whose period is closed
      w.clock.now = new Date('2024-03-31T21:30:00Z');
      const session = await login(w.app, berlin.email, berlin.password);
      expectError(await w.app.call('POST', url, { session, body: { minutes: -10 } }), 409, 'conflict', 'today_period_closed');
      // 22:30 UTC is 00:30 CEST on 1 April (under winter time it would still be 31 March)
      w.clock.now = new Date('2024-03-31T22:30:00Z');
      const res = await w.app.call('POST', url, { session, body: { minutes: -10 } });
      expect(res.status).toBe(201);
      expect(await row(res.body.id)).toMatchObject({ day: '2024-04-01', period_id: april.id, timezone: 'Europe/Berlin' });
      // with March open again, 23:30 local on 31 March lands in March
      await sql`update periods set closed_at = null, closed_by = null where id = ${march.id}`;
      w.clock.now = new Date('2024-03-31T21:30:00Z');
      const res2 = await w.app.call('POST', url, { session, body: { minutes: -10 } });
      expect(await row(res2.body.id)).toMatchObject({ day: '2024-03-31', period_id: march.id });
    } finally {
      w.clock.now = new Date(START);
    }
  });
});

describe('POST /time/tickets/{id}/reattribute', () => {
  it("points every unbilled, uncorrected entry at the ticket's current billing client", async () => {
    const sql = w.app.db.sql;
    const ticket = await makeTicket(sql, w.ws, { projectId: w.project.id });
    const mk = (o: Partial<Parameters<typeof makeTimeEntry>[2]> & { spentOn: string }) =>
      makeTimeEntry(sql, w.ws, { ticketId: ticket.id, userId: w.member.id, ...o });
    const open = await mk({ spentOn: '2024-05-10' });
    const closed = await mk({ spentOn: '2024-04-10' });
    const billed = await mk({ spentOn: '2024-04-10', billed: true });
    const corrected = await mk({ spentOn: '2024-04-11' });
    const correction = await mk({ spentOn: '2024-05-15', minutes: -10, correctsEntryId: corrected.id });
    await sql`update tickets set billing_client_id = ${w.clients.collab} where id = ${ticket.id}`;
    const url = `${base}/tickets/${ticket.id}/reattribute`;
    const res = await w.app.call('POST', url, { session: await w.session(w.admin) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ updated: 2 });
    for (const e of [open, closed]) expect((await row(e.id))!.billing_client_id).toBe(w.clients.collab);
    for (const e of [billed, corrected, correction]) expect((await row(e.id))!.billing_client_id).toBe(w.clients.main);
    const [ev] = await sql`select payload from ticket_events where ticket_id = ${ticket.id} and kind = 'time_reattributed'`;
    expect(ev!.payload).toEqual({ billingClientId: w.clients.collab, updated: 2 });
    expect((await w.app.call('POST', url, { session: await w.session(w.owner) })).body).toEqual({ updated: 0 });
    await sql`update tickets set billing_client_id = null where id = ${ticket.id}`;
    expect((await w.app.call('POST', url, { session: await w.session(w.owner) })).body).toEqual({ updated: 2 });
    expect((await row(open.id))!.billing_client_id).toBeNull();
  });

  it('403 for a token, a member and client users; 404 for an unknown ticket; 400 for a non-UUID', async () => {
    const url = `${base}/tickets/${w.ticket.id}/reattribute`;
    expectError(await w.app.call('POST', url, { token: await w.token(w.owner) }), 403, 'forbidden', 'session_required');
    for (const who of [w.member, w.client, w.elevated]) expectError(await w.app.call('POST', url, { session: await w.session(who) }), 403, 'forbidden');
    expectError(
      await w.app.call('POST', `${base}/tickets/00000000-0000-4000-8000-000000000007/reattribute`, { session: await w.session(w.owner) }),
      404,
      'not_found',
    );
    expectError(await w.app.call('POST', `${base}/tickets/${w.ticket.humanId}/reattribute`, { session: await w.session(w.owner) }), 400, 'invalid', 'bad_uuid');
  });
});
