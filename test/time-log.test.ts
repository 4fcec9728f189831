import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login } from './helpers/app.ts';
import { makeCategory, makeProject, makeTicket, makeToken, makeUser, makeWorkspace } from './helpers/factories.ts';
import { expectError, timeWorld, type TimeWorld } from './time-world.ts';

let w: TimeWorld;
let path: string;

beforeAll(async () => {
  w = await timeWorld();
  path = `/api/w/${w.ws.slug}/time`;
});
afterAll(() => w.app.close());

const countEntries = async () => (await w.app.db.sql<{ n: number }[]>`select count(*)::int as n from time_entries where workspace_id = ${w.ws.id}`)[0]!.n;

describe('POST /time', () => {
  it('logs time as the caller with the attribution of the ticket and the caller, and writes a time_logged event', async () => {
    const sql = w.app.db.sql;
    const cat = await makeCategory(sql, w.ws, 'Developer');
    await sql`update memberships set category_id = ${cat.id}, timezone = 'Europe/Berlin' where identity_id = ${w.member.id}`;
    const [before] = await sql<{ updated_at: Date }[]>`select updated_at from tickets where id = ${w.ticket.id}`;
    const res = await w.app.call('POST', path, {
      token: await w.token(w.member),
      body: { ticketId: w.ticket.id, spentOn: '2024-05-14', startedAt: '09:30', minutes: 90, note: 'Pairing on the API' },
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['id']);
    const [e] = await sql`select * from time_entries where id = ${res.body.id}`;
    expect(e).toMatchObject({
      user_id: w.member.id,
      ticket_id: w.ticket.id,
      project_id: w.project.id,
      billing_client_id: w.clients.main,
      category_id: cat.id,
      period_id: w.periods.may,
      timezone: 'Europe/Berlin',
      minutes: 90,
      note: 'Pairing on the API',
      billable: true,
      billed: false,
      corrects_entry_id: null,
    });
    expect(e!.started_at).toBe('09:30:00');
    const [ev] =
      await sql`select kind, actor_id, payload from ticket_events where ticket_id = ${w.ticket.id} and kind = 'time_logged' order by created_at desc limit 1`;
    expect(ev).toMatchObject({ actor_id: w.member.id, payload: { entryId: res.body.id, minutes: 90, spentOn: '2024-05-14' } });
    const [after] = await sql<{ updated_at: Date }[]>`select updated_at from tickets where id = ${w.ticket.id}`;
    expect(after!.updated_at.getTime()).toBeGreaterThan(before!.updated_at.getTime());
    await sql`update memberships set category_id = null, timezone = 'UTC' where identity_id = ${w.member.id}`;
  });

  it('takes the project membership category over the membership default', async () => {
    const sql = w.app.db.sql;
    const def = await makeCategory(sql, w.ws);
    const override = await makeCategory(sql, w.ws);
    await sql`update memberships set category_id = ${def.id} where identity_id = ${w.limited.id}`;
    await sql`update project_memberships set category_id = ${override.id} where identity_id = ${w.limited.id} and project_id = ${w.project.id}`;
    const res = await w.app.call('POST', path, { token: await w.token(w.limited), body: { ticketId: w.ticket.id, spentOn: '2024-05-13', minutes: 15 } });
    expect(res.status).toBe(201);
    const [e] = await sql`select category_id, started_at, note, billable from time_entries where id = ${res.body.id}`;
    expect(e).toEqual({ category_id: override.id, started_at: null, note: null, billable: true });
  });

  it("takes the ticket's human id as well as its UUID (as MCP does), with the same attribution (issue 26)", async () => {
    const sql = w.app.db.sql;
    const def = await makeCategory(sql, w.ws);
    const override = await makeCategory(sql, w.ws);
    await sql`update memberships set category_id = ${def.id} where identity_id = ${w.limited.id}`;
    await sql`update project_memberships set category_id = ${override.id} where identity_id = ${w.limited.id} and project_id = ${w.project.id}`;
    for (const ticketId of [w.ticket.humanId, w.ticket.humanId.toLowerCase()]) {
      const res = await w.app.call('POST', path, { token: await w.token(w.limited), body: { ticketId, spentOn: '2024-05-13', minutes: 20 } });
      expect(res.status, ticketId).toBe(201);
      const [e] = await sql`select ticket_id, project_id, billing_client_id, category_id from time_entries where id = ${res.body.id}`;
      // the project membership's category: the human id is resolved in the pipelined member read too
      expect(e).toEqual({ ticket_id: w.ticket.id, project_id: w.project.id, billing_client_id: w.clients.main, category_id: override.id });
    }
  });

  it('by human id: an Inbox ticket is 400 ticket_unrouted, an unknown or invisible one 404, nothing written', async () => {
    const n = await countEntries();
    const inbox = await w.app.call('POST', path, {
      session: await w.session(w.member),
      body: { ticketId: w.inbox.humanId, spentOn: '2024-05-03', minutes: 10 },
    });
    expectError(inbox, 400, 'invalid', 'ticket_unrouted');
    for (const [who, ticketId] of [
      [w.member, 'NOPE-999999'],
      [w.outsider, w.ticket.humanId],
    ] as const) {
      const res = await w.app.call('POST', path, { token: await w.token(who), body: { ticketId, spentOn: '2024-05-03', minutes: 10 } });
      expectError(res, 404, 'not_found');
    }
    expect(await countEntries()).toBe(n);
  });

  it('stores billable false and a full-length startedAt', async () => {
    const res = await w.app.call('POST', path, {
      token: await w.token(w.member),
      body: { ticketId: w.ticket.id, spentOn: '2024-05-02', minutes: 5, billable: false, startedAt: '23:59:59', unknownField: 'ignored' },
    });
    expect(res.status).toBe(201);
    const [e] = await w.app.db.sql`select billable, started_at from time_entries where id = ${res.body.id}`;
    expect(e).toEqual({ billable: false, started_at: '23:59:59' });
  });

  it('lets a limited member, the owner and an admin log time', async () => {
    for (const who of [w.limited, w.owner, w.admin]) {
      const res = await w.app.call('POST', path, { token: await w.token(who), body: { ticketId: w.ticket.id, spentOn: '2024-05-03', minutes: 10 } });
      expect(res.status).toBe(201);
    }
  });

  it('404 for a ticket the caller cannot see or that does not exist', async () => {
    const n = await countEntries();
    for (const ticketId of [w.ticket.id, '00000000-0000-4000-8000-000000000000']) {
      const res = await w.app.call('POST', path, { token: await w.token(w.outsider), body: { ticketId, spentOn: '2024-05-03', minutes: 10 } });
      expectError(res, 404, 'not_found');
    }
    expect(await countEntries()).toBe(n);
  });

  it('404 for a ticket outside the project allow-list of a token', async () => {
    const other = await makeProject(w.app.db.sql, w.ws, { members: [{ person: w.member }] });
    const { token } = await makeToken(w.app.db.sql, w.ws, w.member, { scopes: ['read', 'write'], projectIds: [other.id] });
    expectError(await w.app.call('POST', path, { token, body: { ticketId: w.ticket.id, spentOn: '2024-05-03', minutes: 10 } }), 404, 'not_found');
  });

  it('403 without permissions.logTime (a viewer who is not on the project)', async () => {
    await w.app.db.sql`insert into ticket_viewers (ticket_id, identity_id) values (${w.ticket.id}, ${w.outsider.id})`;
    const res = await w.app.call('POST', path, { token: await w.token(w.outsider), body: { ticketId: w.ticket.id, spentOn: '2024-05-03', minutes: 10 } });
    expectError(res, 403, 'forbidden');
    await w.app.db.sql`delete from ticket_viewers where ticket_id = ${w.ticket.id} and identity_id = ${w.outsider.id}`;
  });

  it('400 ticket_unrouted for an Inbox ticket', async () => {
    const res = await w.app.call('POST', path, { session: await w.session(w.member), body: { ticketId: w.inbox.id, spentOn: '2024-05-03', minutes: 10 } });
    expectError(res, 400, 'invalid', 'ticket_unrouted');
  });

  it('403 for client users, elevated or not, even on a ticket they see', async () => {
    for (const who of [w.client, w.elevated]) {
      const res = await w.app.call('POST', path, { token: await w.token(who), body: { ticketId: w.ticket.id, spentOn: '2024-05-03', minutes: 10 } });
      expectError(res, 403, 'forbidden');
    }
  });

  it('403 for a token without write', async () => {
    const res = await w.app.call('POST', path, {
      token: await w.token(w.member, ['read']),
      body: { ticketId: w.ticket.id, spentOn: '2024-05-03', minutes: 10 },
    });
    expectError(res, 403, 'forbidden', 'missing_scope');
  });

  it('400 for invalid values, and nothing is written', async () => {
    const n = await countEntries();
    const base = { ticketId: w.ticket.id, spentOn: '2024-05-03', minutes: 10 };
    const bad: Record<string, unknown>[] = [
      { ...base, minutes: 0 },
      { ...base, minutes: -5 },
      { ...base, minutes: 1.5 },
      { ...base, minutes: '60' },
      { ...base, minutes: 1441 },
      { ...base, minutes: undefined },
      { ...base, spentOn: '2024-02-30' },
      { ...base, spentOn: '15/05/2024' },
      { ...base, spentOn: undefined },
      { ...base, startedAt: '24:00' },
      { ...base, startedAt: '9:00' },
      { ...base, startedAt: '09:60' },
      { ...base, note: 'x'.repeat(10_001) },
      { ...base, note: 42 },
      { ...base, billable: 'yes' },
      { ...base, ticketId: 'not-a-uuid' },
      { ...base, ticketId: undefined },
    ];
    for (const body of bad) {
      const res = await w.app.call('POST', path, { token: await w.token(w.member), body });
      expectError(res, 400, 'invalid', 'validation');
    }
    expect(await countEntries()).toBe(n);
  });

  it('accepts a note of exactly 10,000 characters', async () => {
    const res = await w.app.call('POST', path, {
      token: await w.token(w.member),
      body: { ticketId: w.ticket.id, spentOn: '2024-05-03', minutes: 1, note: 'n'.repeat(10_000) },
    });
    expect(res.status).toBe(201);
  });

  it('409 closed_period_log in a closed period, 409 before_first_period_note before the first period', async () => {
    const n = await countEntries();
    const token = await w.token(w.member);
    expectError(
      await w.app.call('POST', path, { token, body: { ticketId: w.ticket.id, spentOn: '2024-04-30', minutes: 10 } }),
      409,
      'conflict',
      'closed_period_log',
    );
    expectError(
      await w.app.call('POST', path, { token, body: { ticketId: w.ticket.id, spentOn: '2024-02-29', minutes: 10 } }),
      409,
      'conflict',
      'before_first_period_note',
    );
    expect(await countEntries()).toBe(n);
  });

  it('opens the following monthly periods on first need, contiguously', async () => {
    const res = await w.app.call('POST', path, { token: await w.token(w.member), body: { ticketId: w.ticket.id, spentOn: '2024-07-04', minutes: 30 } });
    expect(res.status).toBe(201);
    const periods = await w.app.db.sql`
      select period_start::text as s, period_end::text as e, closed_at from periods where workspace_id = ${w.ws.id} and period_start > '2024-05-01' order by period_start`;
    expect(periods).toEqual([
      { s: '2024-06-01', e: '2024-06-30', closed_at: null },
      { s: '2024-07-01', e: '2024-07-31', closed_at: null },
    ]);
  });

  it('400 date_out_of_range for a date more than 366 days ahead', async () => {
    const res = await w.app.call('POST', path, { token: await w.token(w.member), body: { ticketId: w.ticket.id, spentOn: '2025-05-17', minutes: 30 } });
    expectError(res, 400, 'invalid', 'date_out_of_range');
  });

  it('keeps every one of 50 concurrent entries, once', async () => {
    const sql = w.app.db.sql;
    const ticket = await makeTicket(sql, w.ws, { projectId: w.project.id });
    const token = await w.token(w.member);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => w.app.call('POST', path, { token, body: { ticketId: ticket.id, spentOn: '2024-05-20', minutes: i + 1 } })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(201));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(50);
    const [row] = await sql<
      { n: number; total: number }[]
    >`select count(*)::int as n, sum(minutes)::int as total from time_entries where ticket_id = ${ticket.id}`;
    expect(row).toEqual({ n: 50, total: (50 * 51) / 2 });
    const [ev] = await sql<{ n: number }[]>`select count(*)::int as n from ticket_events where ticket_id = ${ticket.id} and kind = 'time_logged'`;
    expect(ev!.n).toBe(50);
  });
});

describe('POST /time in a workspace without periods', () => {
  it('opens the month of the caller’s today (in their timezone) as the first period; earlier dates are refused', async () => {
    const sql = w.app.db.sql;
    const ws = await makeWorkspace(sql);
    const kiwi = await makeUser(sql, ws, { role: 'owner', timezone: 'Pacific/Auckland' });
    const project = await makeProject(sql, ws);
    const ticket = await makeTicket(sql, ws, { projectId: project.id });
    const { token } = await makeToken(sql, ws, kiwi, { scopes: ['read', 'write'] });
    const url = `/api/w/${ws.slug}/time`;
    // 2024-05-31 13:00 UTC is already 1 June 01:00 in Auckland
    w.clock.now = new Date('2024-05-31T13:00:00Z');
    try {
      expectError(
        await w.app.call('POST', url, { token, body: { ticketId: ticket.id, spentOn: '2024-05-31', minutes: 10 } }),
        409,
        'conflict',
        'before_first_period_note',
      );
      expect((await w.app.call('POST', url, { token, body: { ticketId: ticket.id, spentOn: '2024-06-01', minutes: 10 } })).status).toBe(201);
      const periods = await sql`select period_start::text as s, period_end::text as e from periods where workspace_id = ${ws.id}`;
      expect(periods).toEqual([{ s: '2024-06-01', e: '2024-06-30' }]);
    } finally {
      w.clock.now = new Date('2024-05-15T12:00:00Z');
    }
  });
});

describe('timezones', () => {
  it('keeps the local date and wall clock of an entry logged at 23:30 in Pacific/Auckland, whoever reads it', async () => {
    const sql = w.app.db.sql;
    const kiwi = await makeUser(sql, w.ws, { role: 'member', timezone: 'Pacific/Auckland' });
    const utc = await makeUser(sql, w.ws, { role: 'member', timezone: 'UTC' });
    await sql`insert into project_memberships (project_id, identity_id, workspace_id, access) values (${w.project.id}, ${kiwi.id}, ${w.ws.id}, 'full'),
              (${w.project.id}, ${utc.id}, ${w.ws.id}, 'full')`;
    // 2024-05-10 23:30 in Auckland is 11:30 UTC; 23:30 UTC the same evening is 2024-05-11 in Auckland
    w.clock.now = new Date('2024-05-10T11:30:00Z');
    const kiwiToken = (await makeToken(sql, w.ws, kiwi, { scopes: ['read', 'write'] })).token;
    const utcToken = (await makeToken(sql, w.ws, utc, { scopes: ['read', 'write'] })).token;
    try {
      const a = await w.app.call('POST', path, { token: kiwiToken, body: { ticketId: w.ticket.id, spentOn: '2024-05-10', startedAt: '23:30', minutes: 45 } });
      const b = await w.app.call('POST', path, { token: utcToken, body: { ticketId: w.ticket.id, spentOn: '2024-05-10', startedAt: '23:30', minutes: 45 } });
      expect([a.status, b.status]).toEqual([201, 201]);
      const kiwiWeek = await w.app.call('GET', `${path}?from=2024-05-10&to=2024-05-10`, { token: kiwiToken });
      expect(kiwiWeek.body.timezone).toBe('Pacific/Auckland');
      expect(kiwiWeek.body.entries).toMatchObject([{ id: a.body.id, spentOn: '2024-05-10', startedAt: '23:30:00', timezone: 'Pacific/Auckland' }]);
      const utcWeek = await w.app.call('GET', `${path}?from=2024-05-10&to=2024-05-10`, { token: utcToken });
      expect(utcWeek.body.entries).toMatchObject([{ id: b.body.id, spentOn: '2024-05-10', startedAt: '23:30:00', timezone: 'UTC' }]);
      // an admin in another timezone reads the Auckland entry on its own local date, not shifted into UTC
      const seen = await w.app.call('GET', `${path}?from=2024-05-09&to=2024-05-11&userId=${kiwi.id}`, { token: await w.token(w.admin) });
      expect(seen.body.entries.map((e: any) => [e.spentOn, e.startedAt, e.timezone])).toEqual([['2024-05-10', '23:30:00', 'Pacific/Auckland']]);
    } finally {
      w.clock.now = new Date('2024-05-15T12:00:00Z');
    }
  });

  it("measures the 366-day horizon from the caller's local today", async () => {
    const sql = w.app.db.sql;
    const kiwi = await makeUser(sql, w.ws, { role: 'owner', timezone: 'Pacific/Auckland' });
    const token = (await makeToken(sql, w.ws, kiwi, { scopes: ['read', 'write'] })).token;
    w.clock.now = new Date('2024-05-15T13:00:00Z'); // 2024-05-16 01:00 in Auckland, still 15 May in UTC
    try {
      expect((await w.app.call('POST', path, { token, body: { ticketId: w.ticket.id, spentOn: '2025-05-17', minutes: 10 } })).status).toBe(201);
      const utcRes = await w.app.call('POST', path, { token: await w.token(w.owner), body: { ticketId: w.ticket.id, spentOn: '2025-05-17', minutes: 10 } });
      expectError(utcRes, 400, 'invalid', 'date_out_of_range');
    } finally {
      w.clock.now = new Date('2024-05-15T12:00:00Z');
    }
  });
});

describe('sessions', () => {
  it('POST /time works from a browser session with the CSRF header', async () => {
    const session = await login(w.app, w.member.email, w.member.password);
    const res = await w.app.call('POST', path, { session, body: { ticketId: w.ticket.id, spentOn: '2024-05-06', minutes: 20 } });
    expect(res.status).toBe(201);
  });
});
