import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login } from './helpers/app.ts';
import { makeCategory, makeTimeEntry, makeUser, makeWorkspace } from './helpers/factories.ts';
import { expectError, START, timeWorld, type TimeWorld } from './time-world.ts';

let w: TimeWorld;
let api: string;

beforeAll(async () => {
  w = await timeWorld();
  api = `/api/w/${w.ws.slug}`;
});
afterAll(() => w.app.close());

describe('GET /periods', () => {
  it('lists every period, oldest first, for Owner/Admin from a session', async () => {
    const [april] = await w.app.db.sql<{ closed_at: Date }[]>`select closed_at from periods where id = ${w.periods.april}`;
    const res = await w.app.call('GET', `${api}/periods`, { session: await w.session(w.admin) });
    expect(res.status).toBe(200);
    expect(res.body.periods).toEqual([
      expect.objectContaining({ id: w.periods.march, periodStart: '2024-03-01', periodEnd: '2024-03-31' }),
      { id: w.periods.april, periodStart: '2024-04-01', periodEnd: '2024-04-30', closedAt: april!.closed_at.toISOString(), closedBy: w.owner.id },
      { id: w.periods.may, periodStart: '2024-05-01', periodEnd: '2024-05-31', closedAt: null, closedBy: null },
    ]);
  });

  it('403 for a token, a member, and client users', async () => {
    expectError(await w.app.call('GET', `${api}/periods`, { token: await w.token(w.owner) }), 403, 'forbidden', 'session_required');
    for (const who of [w.member, w.client, w.elevated])
      expectError(await w.app.call('GET', `${api}/periods`, { session: await w.session(who) }), 403, 'forbidden');
  });
});

describe('POST /periods', () => {
  it('opens the next contiguous calendar month', async () => {
    const session = await w.session(w.owner);
    const june = await w.app.call('POST', `${api}/periods`, { session });
    expect(june.status).toBe(201);
    expect(june.body).toEqual({ id: expect.any(String), periodStart: '2024-06-01', periodEnd: '2024-06-30', closedAt: null, closedBy: null });
    const july = await w.app.call('POST', `${api}/periods`, { session, body: { periodStart: '2024-07-01' } });
    expect(july.body).toMatchObject({ periodStart: '2024-07-01', periodEnd: '2024-07-31' });
  });

  it('409 period_not_contiguous for a start that is not the day after the last period; 400 for a malformed date', async () => {
    const session = await w.session(w.owner);
    expectError(await w.app.call('POST', `${api}/periods`, { session, body: { periodStart: '2024-09-01' } }), 409, 'conflict', 'period_not_contiguous');
    expectError(await w.app.call('POST', `${api}/periods`, { session, body: { periodStart: '2024-09' } }), 400, 'invalid', 'validation');
  });

  it('stays contiguous under concurrent requests', async () => {
    const session = await w.session(w.admin);
    const results = await Promise.all(Array.from({ length: 5 }, () => w.app.call('POST', `${api}/periods`, { session })));
    expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    const rows = await w.app.db.sql<{ s: string; e: string }[]>`
      select period_start::text as s, period_end::text as e from periods where workspace_id = ${w.ws.id} order by period_start`;
    for (let i = 1; i < rows.length; i++) {
      const next = new Date(Date.parse(rows[i - 1]!.e) + 86_400_000).toISOString().slice(0, 10);
      expect(rows[i]!.s).toBe(next);
    }
    expect(rows.at(-1)).toEqual({ s: '2024-12-01', e: '2024-12-31' });
  });

  it("in a workspace without periods opens the caller's current month, or the given start through the end of its month", async () => {
    const sql = w.app.db.sql;
    for (const [body, expected] of [
      [undefined, { periodStart: '2024-05-01', periodEnd: '2024-05-31' }],
      [{ periodStart: '2024-03-15' }, { periodStart: '2024-03-15', periodEnd: '2024-03-31' }],
    ] as const) {
      const ws = await makeWorkspace(sql);
      const owner = await makeUser(sql, ws, { role: 'owner' });
      const session = await login(w.app, owner.email, owner.password);
      const res = await w.app.call('POST', `/api/w/${ws.slug}/periods`, { session, body });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject(expected);
    }
  });

  it('403 for a token and for a member', async () => {
    expectError(await w.app.call('POST', `${api}/periods`, { token: await w.token(w.owner) }), 403, 'forbidden');
    expectError(await w.app.call('POST', `${api}/periods`, { session: await w.session(w.member) }), 403, 'forbidden');
  });
});

describe('POST /periods/{id}/close and /reopen', () => {
  it('closing freezes logging; closing again changes nothing; reopening allows it again', async () => {
    const session = await w.session(w.admin);
    const token = await w.token(w.member);
    const closed = await w.app.call('POST', `${api}/periods/${w.periods.may}/close`, { session });
    expect(closed.status).toBe(200);
    expect(closed.body).toMatchObject({ id: w.periods.may, closedAt: START.toISOString(), closedBy: w.admin.id });
    w.clock.now = new Date(START.getTime() + 60_000);
    try {
      const again = await w.app.call('POST', `${api}/periods/${w.periods.may}/close`, { session: await w.session(w.owner) });
      expect(again.body).toEqual(closed.body);
    } finally {
      w.clock.now = new Date(START);
    }
    const log = await w.app.call('POST', `${api}/time`, { token, body: { ticketId: w.ticket.id, spentOn: '2024-05-10', minutes: 5 } });
    expectError(log, 409, 'conflict', 'closed_period_log');
    const reopened = await w.app.call('POST', `${api}/periods/${w.periods.may}/reopen`, { session });
    expect(reopened.body).toMatchObject({ id: w.periods.may, closedAt: null, closedBy: null });
    const log2 = await w.app.call('POST', `${api}/time`, { token, body: { ticketId: w.ticket.id, spentOn: '2024-05-10', minutes: 5 } });
    expect(log2.status).toBe(201);
  });

  it('409 period_billed when reopening a period with a billed entry', async () => {
    await makeTimeEntry(w.app.db.sql, w.ws, { ticketId: w.ticket.id, userId: w.member.id, spentOn: '2024-03-10', billed: true });
    const res = await w.app.call('POST', `${api}/periods/${w.periods.march}/reopen`, { session: await w.session(w.owner) });
    expectError(res, 409, 'conflict', 'period_billed');
    const [p] = await w.app.db.sql`select closed_at from periods where id = ${w.periods.march}`;
    expect(p!.closed_at).not.toBeNull();
  });

  it('404 for an unknown period or one of another workspace; 400 for a bad id; 403 for members and tokens', async () => {
    const session = await w.session(w.owner);
    expectError(await w.app.call('POST', `${api}/periods/00000000-0000-4000-8000-000000000008/close`, { session }), 404, 'not_found');
    expectError(await w.app.call('POST', `${api}/periods/xyz/reopen`, { session }), 400, 'invalid', 'bad_uuid');
    const ws2 = await makeWorkspace(w.app.db.sql);
    const owner2 = await makeUser(w.app.db.sql, ws2, { role: 'owner' });
    const s2 = await login(w.app, owner2.email, owner2.password);
    expectError(await w.app.call('POST', `/api/w/${ws2.slug}/periods/${w.periods.may}/close`, { session: s2 }), 404, 'not_found');
    for (const action of ['close', 'reopen']) {
      expectError(await w.app.call('POST', `${api}/periods/${w.periods.may}/${action}`, { session: await w.session(w.member) }), 403, 'forbidden');
      expectError(await w.app.call('POST', `${api}/periods/${w.periods.may}/${action}`, { token: await w.token(w.owner) }), 403, 'forbidden');
      expectError(await w.app.call('POST', `${api}/periods/${w.periods.may}/${action}`, { session: await w.session(w.client) }), 403, 'forbidden');
    }
  });
});

describe('consultant categories', () => {
  it('GET /categories lists them by name for workspace users with a read token', async () => {
    const sql = w.app.db.sql;
    const b = await makeCategory(sql, w.ws, 'beta tester');
    const a = await makeCategory(sql, w.ws, 'Architect');
    const res = await w.app.call('GET', `${api}/categories`, { token: await w.token(w.member, ['read']) });
    expect(res.status).toBe(200);
    expect(res.body.categories.slice(0, 2)).toEqual([
      { id: a.id, name: 'Architect' },
      { id: b.id, name: 'beta tester' },
    ]);
  });

  it('GET /categories: 403 for client users and a token without read', async () => {
    for (const who of [w.client, w.elevated]) expectError(await w.app.call('GET', `${api}/categories`, { token: await w.token(who) }), 403, 'forbidden');
    expectError(await w.app.call('GET', `${api}/categories`, { token: await w.token(w.member, ['write']) }), 403, 'forbidden', 'missing_scope');
  });

  it('POST /categories creates one (Owner/Admin, session); a taken name is 409 category_exists', async () => {
    const session = await w.session(w.admin);
    const res = await w.app.call('POST', `${api}/categories`, { session, body: { name: '  Senior developer ' } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(String), name: 'Senior developer' });
    expectError(await w.app.call('POST', `${api}/categories`, { session, body: { name: 'SENIOR DEVELOPER' } }), 409, 'conflict', 'category_exists');
    for (const body of [{}, { name: '' }, { name: '   ' }, { name: 'x'.repeat(101) }, { name: 7 }]) {
      expectError(await w.app.call('POST', `${api}/categories`, { session, body }), 400, 'invalid', 'validation');
    }
    expectError(await w.app.call('POST', `${api}/categories`, { token: await w.token(w.owner), body: { name: 'Token made' } }), 403, 'forbidden');
    expectError(await w.app.call('POST', `${api}/categories`, { session: await w.session(w.member), body: { name: 'Member made' } }), 403, 'forbidden');
  });

  it('PUT /projects/{id}/members/{identityId}/category sets the project override used when logging time', async () => {
    const sql = w.app.db.sql;
    const cat = await makeCategory(sql, w.ws);
    const url = `${api}/projects/${w.project.id}/members/${w.member.id}/category`;
    const res = await w.app.call('PUT', url, { session: await w.session(w.owner), body: { categoryId: cat.id } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ projectId: w.project.id, identityId: w.member.id, categoryId: cat.id });
    const logged = await w.app.call('POST', `${api}/time`, {
      token: await w.token(w.member),
      body: { ticketId: w.ticket.id, spentOn: '2024-05-09', minutes: 9 },
    });
    const [e] = await sql`select category_id from time_entries where id = ${logged.body.id}`;
    expect(e!.category_id).toBe(cat.id);
    expectError(
      await w.app.call('PUT', url, { session: await w.session(w.owner), body: { categoryId: '00000000-0000-4000-8000-000000000009' } }),
      404,
      'not_found',
      'unknown_category',
    );
    expectError(
      await w.app.call('PUT', `${api}/projects/${w.project.id}/members/${w.outsider.id}/category`, {
        session: await w.session(w.owner),
        body: { categoryId: null },
      }),
      404,
      'not_found',
      'unknown_person',
    );
    expectError(await w.app.call('PUT', url, { session: await w.session(w.member), body: { categoryId: null } }), 403, 'forbidden');
    expectError(await w.app.call('PUT', url, { session: await w.session(w.owner), body: {} }), 400, 'invalid', 'validation');
    expect((await w.app.call('PUT', url, { session: await w.session(w.owner), body: { categoryId: null } })).body.categoryId).toBeNull();
  });
});

describe('PATCH /members/{identityId}: timezone, weekly target, default category', () => {
  it('a workspace user sets their own timezone and weekly target; GET /time reflects them', async () => {
    const res = await w.app.call('PATCH', `${api}/members/${w.limited.id}`, {
      session: await w.session(w.limited),
      body: { timezone: 'america/new_york', weeklyTargetMinutes: 2400 },
    });
    expect(res.status).toBe(200);
    // the member as PATCH /members answers since issue 22 (role and client beside the time settings)
    expect(res.body).toEqual({
      identityId: w.limited.id,
      name: 'Lee Limited',
      email: w.limited.email,
      role: 'member',
      clientId: null,
      timezone: 'America/New_York',
      weeklyTargetMinutes: 2400,
      categoryId: null,
      billingOperator: false,
      deactivatedAt: null,
    });
    const week = await w.app.call('GET', `${api}/time?from=2024-05-13&to=2024-05-19`, { token: await w.token(w.limited) });
    expect(week.body).toMatchObject({ timezone: 'America/New_York', expectedWeekMinutes: 2400 });
    const cleared = await w.app.call('PATCH', `${api}/members/${w.limited.id}`, { session: await w.session(w.limited), body: { weeklyTargetMinutes: null } });
    expect(cleared.body).toMatchObject({ timezone: 'America/New_York', weeklyTargetMinutes: null });
  });

  it('400 for an unknown timezone or a target out of range; nothing changes', async () => {
    const session = await w.session(w.member);
    for (const timezone of ['Mars/Olympus_Mons', '+01:00', 'UTC+1', '']) {
      expectError(await w.app.call('PATCH', `${api}/members/${w.member.id}`, { session, body: { timezone } }), 400, 'invalid');
    }
    for (const weeklyTargetMinutes of [-1, 10_081, 1.5, '2400']) {
      expectError(await w.app.call('PATCH', `${api}/members/${w.member.id}`, { session, body: { weeklyTargetMinutes } }), 400, 'invalid', 'validation');
    }
    const [m] = await w.app.db.sql`select timezone, weekly_target_minutes from memberships where identity_id = ${w.member.id} and workspace_id = ${w.ws.id}`;
    expect(m).toEqual({ timezone: 'UTC', weekly_target_minutes: null });
  });

  it("Owner/Admin set anyone's settings and the default category; a member may not", async () => {
    const cat = await makeCategory(w.app.db.sql, w.ws);
    const res = await w.app.call('PATCH', `${api}/members/${w.member.id}`, {
      session: await w.session(w.admin),
      body: { categoryId: cat.id, timezone: 'Europe/Berlin' },
    });
    expect(res.body).toEqual({
      identityId: w.member.id,
      name: 'Mia Member',
      email: w.member.email,
      role: 'member',
      clientId: null,
      timezone: 'Europe/Berlin',
      weeklyTargetMinutes: null,
      categoryId: cat.id,
      billingOperator: false,
      deactivatedAt: null,
    });
    expectError(
      await w.app.call('PATCH', `${api}/members/${w.limited.id}`, { session: await w.session(w.member), body: { weeklyTargetMinutes: 60 } }),
      403,
      'forbidden',
    );
    expectError(
      await w.app.call('PATCH', `${api}/members/${w.member.id}`, { session: await w.session(w.member), body: { categoryId: null } }),
      403,
      'forbidden',
    );
    expectError(
      await w.app.call('PATCH', `${api}/members/${w.member.id}`, {
        session: await w.session(w.owner),
        body: { categoryId: '00000000-0000-4000-8000-00000000000a' },
      }),
      404,
      'not_found',
      'unknown_category',
    );
    await w.app.db.sql`update memberships set timezone = 'UTC', category_id = null where identity_id = ${w.member.id}`;
  });

  it('404 for a client user or an unknown identity; 403 for tokens and client callers; 400 for a bad id', async () => {
    const session = await w.session(w.owner);
    for (const id of [w.client.id, '00000000-0000-4000-8000-00000000000b']) {
      expectError(await w.app.call('PATCH', `${api}/members/${id}`, { session, body: { timezone: 'UTC' } }), 404, 'not_found', 'unknown_person');
    }
    expectError(await w.app.call('PATCH', `${api}/members/${w.member.id}`, { token: await w.token(w.member), body: { timezone: 'UTC' } }), 403, 'forbidden');
    expectError(
      await w.app.call('PATCH', `${api}/members/${w.client.id}`, { session: await w.session(w.client), body: { timezone: 'UTC' } }),
      403,
      'forbidden',
    );
    expectError(await w.app.call('PATCH', `${api}/members/me`, { session, body: { timezone: 'UTC' } }), 400, 'invalid', 'bad_uuid');
  });
});
