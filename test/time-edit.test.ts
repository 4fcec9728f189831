import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCategory, makeProject, makeTicket, makeTimeEntry, makeToken, makeWorkspace, makeUser } from './helpers/factories.ts';
import { expectError, timeWorld, type TimeWorld } from './time-world.ts';

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
const patch = async (id: string, body: unknown, auth: { token?: string; session?: Awaited<ReturnType<TimeWorld['session']>> }) =>
  w.app.call('PATCH', `${base}/${id}`, { ...auth, body });

describe('PATCH /time/{id}: open period', () => {
  it('the author changes work facts; a time_edited event lists the fields', async () => {
    const { id } = await entry({ spentOn: '2024-05-10', minutes: 30 });
    const res = await patch(id, { minutes: 45, note: 'More', startedAt: '07:05', billable: false, spentOn: '2024-05-11' }, { token: await w.token(w.member) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id });
    expect(await row(id)).toMatchObject({ minutes: 45, note: 'More', started_at: '07:05:00', billable: false, day: '2024-05-11', period_id: w.periods.may });
    const [ev] = await w.app.db.sql`select payload, actor_id from ticket_events where kind = 'time_edited' and payload->>'entryId' = ${id}`;
    expect(ev).toEqual({ actor_id: w.member.id, payload: { entryId: id, fields: ['spentOn', 'startedAt', 'minutes', 'note', 'billable'] } });
  });

  it('sending back unchanged values changes nothing and writes no event', async () => {
    const { id } = await entry({ spentOn: '2024-05-10', minutes: 30 });
    const res = await patch(
      id,
      { minutes: 30, spentOn: '2024-05-10', startedAt: null, note: null, billable: true, correctsEntryId: null },
      { token: await w.token(w.member) },
    );
    expect(res.status).toBe(200);
    const [n] = await w.app.db.sql`select count(*)::int as n from ticket_events where kind = 'time_edited' and payload->>'entryId' = ${id}`;
    expect(n!.n).toBe(0);
  });

  it('moving to a later month opens its period on need', async () => {
    const { id } = await entry({ spentOn: '2024-05-10' });
    expect((await patch(id, { spentOn: '2024-06-03' }, { token: await w.token(w.member) })).status).toBe(200);
    const [p] = await w.app.db.sql`select p.period_start::text as s from time_entries e join periods p on p.id = e.period_id where e.id = ${id}`;
    expect(p!.s).toBe('2024-06-01');
  });

  it("403 on someone else's entry; Owner and Admin may edit anyone's", async () => {
    const { id } = await entry({ spentOn: '2024-05-10', userId: w.limited.id });
    expectError(await patch(id, { minutes: 20 }, { token: await w.token(w.member) }), 403, 'forbidden');
    expect((await patch(id, { minutes: 21 }, { token: await w.token(w.owner) })).status).toBe(200);
    expect((await patch(id, { minutes: 22 }, { token: await w.token(w.admin) })).status).toBe(200);
    expect((await row(id))!.minutes).toBe(22);
  });

  it('404 for an unknown entry, one of another workspace, or one outside a token allow-list; 400 for a bad id', async () => {
    const token = await w.token(w.owner);
    expectError(await patch('00000000-0000-4000-8000-000000000002', { minutes: 5 }, { token }), 404, 'not_found');
    expectError(await patch('nope', { minutes: 5 }, { token }), 400, 'invalid', 'bad_uuid');
    const ws2 = await makeWorkspace(w.app.db.sql);
    const stranger = await makeUser(w.app.db.sql, ws2, { role: 'owner' });
    const strangerToken = (await makeToken(w.app.db.sql, ws2, stranger)).token;
    const { id } = await entry({ spentOn: '2024-05-10' });
    expectError(await w.app.call('PATCH', `/api/w/${ws2.slug}/time/${id}`, { token: strangerToken, body: { minutes: 5 } }), 404, 'not_found');
    const side = await makeProject(w.app.db.sql, w.ws);
    const narrow = (await makeToken(w.app.db.sql, w.ws, w.member, { scopes: ['read', 'write'], projectIds: [side.id] })).token;
    expectError(await patch(id, { minutes: 5 }, { token: narrow }), 404, 'not_found');
  });

  it('403 for client users and for a token without write', async () => {
    const { id } = await entry({ spentOn: '2024-05-10' });
    for (const who of [w.client, w.elevated]) expectError(await patch(id, { minutes: 5 }, { token: await w.token(who) }), 403, 'forbidden');
    expectError(await patch(id, { minutes: 5 }, { token: await w.token(w.member, ['read']) }), 403, 'forbidden', 'missing_scope');
  });

  it('400 negative_minutes on an entry that is not a correction; 400 for invalid values; nothing changes', async () => {
    const { id } = await entry({ spentOn: '2024-05-10', minutes: 30 });
    const token = await w.token(w.member);
    expectError(await patch(id, { minutes: -10 }, { token }), 400, 'invalid', 'negative_minutes');
    for (const body of [
      { minutes: 0 },
      { minutes: 2.5 },
      { minutes: 1441 },
      { note: 'x'.repeat(10_001) },
      { startedAt: '25:00' },
      { spentOn: '2024-5-1' },
      { billable: 1 },
    ]) {
      expectError(await patch(id, body, { token }), 400, 'invalid', 'validation');
    }
    expect(await row(id)).toMatchObject({ minutes: 30, note: null, started_at: null, billable: true, day: '2024-05-10' });
  });

  it('400 correction_fixed for a correction’s date or any change of correctsEntryId', async () => {
    const original = await entry({ spentOn: '2024-04-10', minutes: 60 });
    const correction = await entry({ spentOn: '2024-05-15', minutes: -20, correctsEntryId: original.id });
    const plain = await entry({ spentOn: '2024-05-10' });
    const token = await w.token(w.member);
    expectError(await patch(correction.id, { spentOn: '2024-05-16' }, { token }), 400, 'invalid', 'correction_fixed');
    expectError(await patch(correction.id, { correctsEntryId: plain.id }, { token }), 400, 'invalid', 'correction_fixed');
    expectError(await patch(correction.id, { correctsEntryId: null }, { token }), 400, 'invalid', 'correction_fixed');
    expectError(await patch(plain.id, { correctsEntryId: original.id }, { token }), 400, 'invalid', 'correction_fixed');
    expect((await patch(correction.id, { spentOn: '2024-05-15', correctsEntryId: original.id, note: 'same date' }, { token })).status).toBe(200);
  });

  it('a correction may carry negative minutes, but its chain never nets below zero (400 net_negative)', async () => {
    const original = await entry({ spentOn: '2024-04-11', minutes: 60 });
    const correction = await entry({ spentOn: '2024-05-15', minutes: -30, correctsEntryId: original.id });
    const token = await w.token(w.member);
    expectError(await patch(correction.id, { minutes: -61 }, { token }), 400, 'invalid', 'net_negative');
    expect((await patch(correction.id, { minutes: -60 }, { token })).status).toBe(200);
    expect((await row(correction.id))!.minutes).toBe(-60);
  });

  it('409 destination_period_closed and 409 before_first_period when moving the date', async () => {
    const { id } = await entry({ spentOn: '2024-05-10' });
    const token = await w.token(w.member);
    expectError(await patch(id, { spentOn: '2024-04-15' }, { token }), 409, 'conflict', 'destination_period_closed');
    expectError(await patch(id, { spentOn: '2024-02-15' }, { token }), 409, 'conflict', 'before_first_period');
    expect((await row(id))!.day).toBe('2024-05-10');
  });
});

describe('PATCH /time/{id}: attribution', () => {
  it('Owner/Admin from a session may set the billing client (project client or collaborator) and category', async () => {
    const cat = await makeCategory(w.app.db.sql, w.ws);
    const { id } = await entry({ spentOn: '2024-05-10' });
    const session = await w.session(w.admin);
    expect((await patch(id, { billingClientId: w.clients.collab, categoryId: cat.id }, { session })).status).toBe(200);
    expect(await row(id)).toMatchObject({ billing_client_id: w.clients.collab, category_id: cat.id });
    expect((await patch(id, { billingClientId: null, categoryId: null }, { session: await w.session(w.owner) })).status).toBe(200);
    expect(await row(id)).toMatchObject({ billing_client_id: null, category_id: null });
    expect((await patch(id, { billingClientId: w.clients.main }, { session })).status).toBe(200);
  });

  it('403 for a token (even an admin’s) and for a member’s session', async () => {
    const cat = await makeCategory(w.app.db.sql, w.ws);
    const { id } = await entry({ spentOn: '2024-05-10' });
    expectError(await patch(id, { categoryId: cat.id }, { token: await w.token(w.admin) }), 403, 'forbidden');
    expectError(await patch(id, { billingClientId: w.clients.collab }, { token: await w.token(w.member) }), 403, 'forbidden');
    expectError(await patch(id, { billingClientId: w.clients.collab }, { session: await w.session(w.member) }), 403, 'forbidden');
    expect(await row(id)).toMatchObject({ billing_client_id: w.clients.main, category_id: null });
  });

  it('400 billing_client_scope for a client outside the project; 404 unknown_category', async () => {
    const { id } = await entry({ spentOn: '2024-05-10' });
    const session = await w.session(w.admin);
    expectError(await patch(id, { billingClientId: w.clients.other }, { session }), 400, 'invalid', 'billing_client_scope');
    expectError(await patch(id, { billingClientId: '00000000-0000-4000-8000-000000000003' }, { session }), 400, 'invalid', 'billing_client_scope');
    expectError(await patch(id, { categoryId: '00000000-0000-4000-8000-000000000004' }, { session }), 404, 'not_found', 'unknown_category');
    const foreign = await makeWorkspace(w.app.db.sql);
    const foreignCat = await makeCategory(w.app.db.sql, foreign);
    expectError(await patch(id, { categoryId: foreignCat.id }, { session }), 404, 'not_found', 'unknown_category');
  });

  it('409 attribution_diverges for attribution or billable changes on an entry that has corrections, or on a correction', async () => {
    const original = await entry({ spentOn: '2024-04-12', minutes: 60 });
    const correction = await entry({ spentOn: '2024-05-15', minutes: -15, correctsEntryId: original.id });
    const cat = await makeCategory(w.app.db.sql, w.ws);
    const session = await w.session(w.owner);
    expectError(await patch(original.id, { billingClientId: w.clients.collab }, { session }), 409, 'conflict', 'attribution_diverges');
    expectError(await patch(correction.id, { categoryId: cat.id }, { session }), 409, 'conflict', 'attribution_diverges');
    expectError(await patch(original.id, { billable: false }, { session }), 409, 'conflict', 'attribution_diverges');
    expectError(await patch(correction.id, { billable: false }, { token: await w.token(w.member) }), 409, 'conflict', 'attribution_diverges');
    expect((await patch(correction.id, { note: 'why' }, { token: await w.token(w.member) })).status).toBe(200);
  });
});

describe('PATCH /time/{id}: closed periods and billed entries', () => {
  it('Owner/Admin from a session may change billable, billing client and category in a closed period', async () => {
    const cat = await makeCategory(w.app.db.sql, w.ws);
    const { id } = await entry({ spentOn: '2024-04-10' });
    const session = await w.session(w.admin);
    expect((await patch(id, { billable: false, billingClientId: w.clients.collab, categoryId: cat.id }, { session })).status).toBe(200);
    expect(await row(id)).toMatchObject({ billable: false, billing_client_id: w.clients.collab, category_id: cat.id });
  });

  it('409 closed_period_edit for work facts, and for anything from a non-admin session', async () => {
    const { id } = await entry({ spentOn: '2024-04-10', minutes: 40 });
    const admin = await w.session(w.admin);
    for (const body of [{ minutes: 41 }, { note: 'late' }, { startedAt: '10:00' }, { spentOn: '2024-05-02' }]) {
      expectError(await patch(id, body, { session: admin }), 409, 'conflict', 'closed_period_edit');
    }
    expectError(await patch(id, { billable: false }, { session: await w.session(w.member) }), 409, 'conflict', 'closed_period_edit');
    expectError(await patch(id, { minutes: 5 }, { session: await w.session(w.member) }), 409, 'conflict', 'closed_period_edit');
    expect(await row(id)).toMatchObject({ minutes: 40, note: null, billable: true, day: '2024-04-10' });
  });

  it('403 for a token used on a closed-period entry, whoever holds it', async () => {
    const { id } = await entry({ spentOn: '2024-04-10' });
    expectError(await patch(id, { billable: false }, { token: await w.token(w.admin) }), 403, 'forbidden');
    expectError(await patch(id, { minutes: 5 }, { token: await w.token(w.member) }), 403, 'forbidden');
  });

  it('409 entry_billed for any change of a billed entry', async () => {
    const { id } = await entry({ spentOn: '2024-04-10', billed: true });
    const open = await entry({ spentOn: '2024-05-10', billed: true });
    expectError(await patch(id, { billable: false }, { session: await w.session(w.owner) }), 409, 'conflict', 'entry_billed');
    expectError(await patch(open.id, { minutes: 5 }, { token: await w.token(w.member) }), 409, 'conflict', 'entry_billed');
    expectError(await patch(open.id, { billingClientId: w.clients.collab }, { session: await w.session(w.admin) }), 409, 'conflict', 'entry_billed');
  });
});

describe('DELETE /time/{id}', () => {
  it('the author deletes an entry of an open period from a session; a time_deleted event is written', async () => {
    const { id } = await entry({ spentOn: '2024-05-10', minutes: 12 });
    const res = await w.app.call('DELETE', `${base}/${id}`, { session: await w.session(w.member) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expect(await row(id)).toBeUndefined();
    const [ev] = await w.app.db.sql`select payload from ticket_events where kind = 'time_deleted' and payload->>'entryId' = ${id}`;
    expect(ev!.payload).toEqual({ entryId: id, minutes: 12, spentOn: '2024-05-10' });
  });

  it('403 with a token (session only)', async () => {
    const { id } = await entry({ spentOn: '2024-05-10' });
    expectError(await w.app.call('DELETE', `${base}/${id}`, { token: await w.token(w.member) }), 403, 'forbidden', 'session_required');
    expect(await row(id)).toBeDefined();
  });

  it("403 for someone else's entry; Owner and Admin may delete anyone's", async () => {
    const a = await entry({ spentOn: '2024-05-10', userId: w.limited.id });
    const b = await entry({ spentOn: '2024-05-10', userId: w.limited.id });
    expectError(await w.app.call('DELETE', `${base}/${a.id}`, { session: await w.session(w.member) }), 403, 'forbidden');
    expect((await w.app.call('DELETE', `${base}/${a.id}`, { session: await w.session(w.owner) })).status).toBe(200);
    expect((await w.app.call('DELETE', `${base}/${b.id}`, { session: await w.session(w.admin) })).status).toBe(200);
  });

  it('409 closed_period_delete in a closed period; 409 entry_billed for a billed entry', async () => {
    const closed = await entry({ spentOn: '2024-04-10' });
    const billed = await entry({ spentOn: '2024-04-10', billed: true });
    const session = await w.session(w.owner);
    expectError(await w.app.call('DELETE', `${base}/${closed.id}`, { session }), 409, 'conflict', 'closed_period_delete');
    expectError(await w.app.call('DELETE', `${base}/${billed.id}`, { session }), 409, 'conflict', 'entry_billed');
    expect(await row(closed.id)).toBeDefined();
    expect(await row(billed.id)).toBeDefined();
  });

  it('404 for an unknown entry; 403 for client users', async () => {
    expectError(await w.app.call('DELETE', `${base}/00000000-0000-4000-8000-000000000005`, { session: await w.session(w.owner) }), 404, 'not_found');
    const { id } = await entry({ spentOn: '2024-05-10' });
    for (const who of [w.client, w.elevated]) expectError(await w.app.call('DELETE', `${base}/${id}`, { session: await w.session(who) }), 403, 'forbidden');
  });

  it('409 entry_corrected for an entry with corrections (period reopened); 400 net_negative when removing a correction would go below zero', async () => {
    const sql = w.app.db.sql;
    const ticket = await makeTicket(sql, w.ws, { projectId: w.project.id });
    const original = await makeTimeEntry(sql, w.ws, { ticketId: ticket.id, userId: w.member.id, spentOn: '2024-05-05', minutes: 60 });
    const plus = await makeTimeEntry(sql, w.ws, { ticketId: ticket.id, userId: w.member.id, spentOn: '2024-05-15', minutes: 30, correctsEntryId: original.id });
    const minus = await makeTimeEntry(sql, w.ws, {
      ticketId: ticket.id,
      userId: w.member.id,
      spentOn: '2024-05-15',
      minutes: -80,
      correctsEntryId: original.id,
    });
    const session = await w.session(w.owner);
    expectError(await w.app.call('DELETE', `${base}/${original.id}`, { session }), 409, 'conflict', 'entry_corrected');
    expectError(await w.app.call('DELETE', `${base}/${plus.id}`, { session }), 400, 'invalid', 'net_negative');
    expect((await w.app.call('DELETE', `${base}/${minus.id}`, { session })).status).toBe(200);
    expect((await w.app.call('DELETE', `${base}/${plus.id}`, { session })).status).toBe(200);
  });
});
