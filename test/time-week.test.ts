import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCategory, makeProject, makeTicket, makeTimeEntry, makeToken } from './helpers/factories.ts';
import { expectError, timeWorld, type TimeWorld } from './time-world.ts';

let w: TimeWorld;
let path: string;
let other: { id: string; humanId: string };

beforeAll(async () => {
  w = await timeWorld();
  path = `/api/w/${w.ws.slug}/time`;
  other = await makeTicket(w.app.db.sql, w.ws, { projectId: w.project.id, title: 'Other work' });
});
afterAll(() => w.app.close());

describe('GET /time', () => {
  it('answers the Week of the caller with every TimeEntry field', async () => {
    const sql = w.app.db.sql;
    const cat = await makeCategory(sql, w.ws);
    await sql`update memberships set weekly_target_minutes = 2400, timezone = 'Europe/Berlin' where identity_id = ${w.member.id}`;
    const token = await w.token(w.member);
    const logged = await w.app.call('POST', path, {
      token,
      body: { ticketId: w.ticket.id, spentOn: '2024-05-14', startedAt: '08:15', minutes: 50, note: 'Standup and fixes', billable: false },
    });
    await sql`update time_entries set category_id = ${cat.id} where id = ${logged.body.id}`;
    const closed = await makeTimeEntry(sql, w.ws, { ticketId: w.ticket.id, userId: w.member.id, spentOn: '2024-04-30', minutes: 25 });
    const res = await w.app.call('GET', `${path}?from=2024-04-29&to=2024-05-15`, { token });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['entries', 'expectedWeekMinutes', 'periods', 'timezone', 'userId']);
    expect(res.body).toMatchObject({ expectedWeekMinutes: 2400, timezone: 'Europe/Berlin', userId: w.member.id });
    const [clientRow] = await sql<{ name: string }[]>`select name from clients where id = ${w.clients.main}`;
    const [me] = await sql<{ name: string }[]>`select name from identities where id = ${w.member.id}`;
    const [april] = await sql<{ closed_at: Date }[]>`select closed_at from periods where id = ${w.periods.april}`;
    expect(res.body.entries).toEqual([
      {
        id: closed.id,
        ticketId: w.ticket.id,
        ticketRef: w.ticket.humanId,
        title: 'Build the thing',
        ticketHidden: false,
        userId: w.member.id,
        userName: me!.name,
        projectId: w.project.id,
        projectName: `Project ${w.project.key}`,
        billingClientId: w.clients.main,
        clientName: clientRow!.name,
        categoryId: null,
        periodId: w.periods.april,
        spentOn: '2024-04-30',
        startedAt: null,
        timezone: 'UTC',
        minutes: 25,
        note: null,
        billable: true,
        correctsEntryId: null,
        billed: false,
        closedAt: april!.closed_at.toISOString(),
        closedBy: w.owner.id,
      },
      expect.objectContaining({
        id: logged.body.id,
        categoryId: cat.id,
        periodId: w.periods.may,
        spentOn: '2024-05-14',
        startedAt: '08:15:00',
        timezone: 'Europe/Berlin',
        minutes: 50,
        note: 'Standup and fixes',
        billable: false,
        closedAt: null,
        closedBy: null,
      }),
    ]);
    expect(res.body.entries[0].closedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(res.body.periods).toEqual([
      { id: w.periods.april, periodStart: '2024-04-01', periodEnd: '2024-04-30', closedAt: april!.closed_at.toISOString(), closedBy: w.owner.id },
      { id: w.periods.may, periodStart: '2024-05-01', periodEnd: '2024-05-31', closedAt: null, closedBy: null },
    ]);
    await sql`update memberships set weekly_target_minutes = null, timezone = 'UTC' where identity_id = ${w.member.id}`;
  });

  it('expectedWeekMinutes is null without a weekly target; an empty range lists no entries', async () => {
    const res = await w.app.call('GET', `${path}?from=2024-01-01&to=2024-01-07`, { token: await w.token(w.limited) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ entries: [], periods: [], expectedWeekMinutes: null, timezone: 'UTC', userId: w.limited.id });
  });

  it('orders entries by date, then start time (unknown last)', async () => {
    const token = await w.token(w.limited);
    const post = (spentOn: string, startedAt: string | null) =>
      w.app.call('POST', path, { token, body: { ticketId: w.ticket.id, spentOn, startedAt, minutes: 5 } }).then((r) => r.body.id);
    const c = await post('2024-05-21', null);
    const b = await post('2024-05-21', '14:00');
    const a = await post('2024-05-21', '09:00');
    const d = await post('2024-05-20', null);
    const res = await w.app.call('GET', `${path}?from=2024-05-20&to=2024-05-21`, { token });
    expect(res.body.entries.map((e: any) => e.id)).toEqual([d, a, b, c]);
  });

  it('filters by ticketId', async () => {
    const token = await w.token(w.limited);
    const res1 = await w.app.call('POST', path, { token, body: { ticketId: other.id, spentOn: '2024-05-22', minutes: 7 } });
    await w.app.call('POST', path, { token, body: { ticketId: w.ticket.id, spentOn: '2024-05-22', minutes: 8 } });
    const res = await w.app.call('GET', `${path}?from=2024-05-22&to=2024-05-22&ticketId=${other.id}`, { token });
    expect(res.body.entries.map((e: any) => [e.id, e.ticketRef, e.title])).toEqual([[res1.body.id, other.humanId, 'Other work']]);
  });

  it('400 range_limit when to is before from or the range exceeds 366 days; exactly 366 is fine', async () => {
    const token = await w.token(w.member);
    expectError(await w.app.call('GET', `${path}?from=2024-05-02&to=2024-05-01`, { token }), 400, 'invalid', 'range_limit');
    expectError(await w.app.call('GET', `${path}?from=2024-01-01&to=2025-01-01`, { token }), 400, 'invalid', 'range_limit');
    expect((await w.app.call('GET', `${path}?from=2024-01-01&to=2024-12-31`, { token })).status).toBe(200);
    expect((await w.app.call('GET', `${path}?from=2023-01-01&to=2024-01-01`, { token })).status).toBe(200);
    expectError(await w.app.call('GET', `${path}?from=2023-01-01&to=2024-01-02`, { token }), 400, 'invalid', 'range_limit');
  });

  it('400 for missing or malformed parameters', async () => {
    const token = await w.token(w.member);
    for (const q of [
      '',
      '?from=2024-05-01',
      '?to=2024-05-01',
      '?from=2024-13-01&to=2024-12-01',
      '?from=x&to=y',
      '?from=2024-05-01&to=2024-05-02&userId=nope',
    ]) {
      expectError(await w.app.call('GET', `${path}${q}`, { token }), 400, 'invalid', 'validation');
    }
    expectError(await w.app.call('GET', `${path}?from=2024-05-01&from=2024-05-02&to=2024-05-03`, { token }), 400, 'invalid');
  });

  it("403 for someone else's time unless Owner or Admin", async () => {
    expectError(await w.app.call('GET', `${path}?from=2024-05-01&to=2024-05-31&userId=${w.limited.id}`, { token: await w.token(w.member) }), 403, 'forbidden');
    for (const who of [w.owner, w.admin]) {
      const res = await w.app.call('GET', `${path}?from=2024-05-01&to=2024-05-31&userId=${w.limited.id}`, { token: await w.token(who) });
      expect(res.status).toBe(200);
      expect(res.body.userId).toBe(w.limited.id);
      expect(res.body.entries.length).toBeGreaterThan(0);
      expect(res.body.entries.every((e: any) => e.userId === w.limited.id)).toBe(true);
    }
  });

  it('a member may name themselves as userId', async () => {
    const res = await w.app.call('GET', `${path}?from=2024-05-01&to=2024-05-31&userId=${w.member.id.toUpperCase()}`, { token: await w.token(w.member) });
    expect(res.status).toBe(200);
    expect(res.body.userId).toBe(w.member.id);
  });

  it('404 when userId is not a workspace user (unknown, or a client user)', async () => {
    const token = await w.token(w.admin);
    for (const id of ['00000000-0000-4000-8000-000000000001', w.client.id, w.elevated.id]) {
      expectError(await w.app.call('GET', `${path}?from=2024-05-01&to=2024-05-31&userId=${id}`, { token }), 404, 'not_found', 'unknown_person');
    }
  });

  it('403 for client users and for a token without read', async () => {
    for (const who of [w.client, w.elevated]) {
      expectError(await w.app.call('GET', `${path}?from=2024-05-01&to=2024-05-31`, { token: await w.token(who) }), 403, 'forbidden');
      expectError(await w.app.call('GET', `${path}?from=2024-05-01&to=2024-05-31`, { session: await w.session(who) }), 403, 'forbidden');
    }
    expectError(
      await w.app.call('GET', `${path}?from=2024-05-01&to=2024-05-31`, { token: await w.token(w.member, ['write']) }),
      403,
      'forbidden',
      'missing_scope',
    );
  });

  it('still lists the caller’s own entries on a ticket that moved out of their sight, without naming the ticket', async () => {
    const sql = w.app.db.sql;
    const ticket = await makeTicket(sql, w.ws, { projectId: w.project.id, title: 'Moves away' });
    const token = await w.token(w.member);
    const res = await w.app.call('POST', path, { token, body: { ticketId: ticket.id, spentOn: '2024-05-23', minutes: 11 } });
    const secret = await makeProject(sql, w.ws, { key: 'SECRT' });
    await sql`update tickets set project_id = ${secret.id}, number = 1 where id = ${ticket.id}`;
    const week = await w.app.call('GET', `${path}?from=2024-05-23&to=2024-05-23`, { token });
    expect(week.body.entries).toMatchObject([
      { id: res.body.id, ticketId: ticket.id, ticketRef: null, title: null, ticketHidden: true, projectId: w.project.id },
    ]);
  });

  it('a token restricted to named projects lists only entries of those projects', async () => {
    const sql = w.app.db.sql;
    const side = await makeProject(sql, w.ws, { members: [{ person: w.member }] });
    const sideTicket = await makeTicket(sql, w.ws, { projectId: side.id });
    const token = await w.token(w.member);
    const a = await w.app.call('POST', path, { token, body: { ticketId: sideTicket.id, spentOn: '2024-05-24', minutes: 3 } });
    await w.app.call('POST', path, { token, body: { ticketId: w.ticket.id, spentOn: '2024-05-24', minutes: 4 } });
    const narrow = (await makeToken(sql, w.ws, w.member, { scopes: ['read'], projectIds: [side.id] })).token;
    const res = await w.app.call('GET', `${path}?from=2024-05-24&to=2024-05-24`, { token: narrow });
    expect(res.body.entries.map((e: any) => e.id)).toEqual([a.body.id]);
  });
});
