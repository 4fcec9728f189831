import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makePeriod, makeProject, makeTicket, makeTimeEntry, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { changedByRefusal, expectRefused, tableState } from './helpers/db-state.ts';
import { rawRequest } from './helpers/raw.ts';

/**
 * Issue 9, defects 4-6: hostile strings (NUL, lone surrogates) anywhere in a body, query, path or
 * multipart field, and dates outside 1900-01-01..9999-12-31. Each is a 4xx in the envelope, and a
 * refused request changes no row. Content codings and other transport input: input-transport.test.ts.
 */

const NOW = new Date('2024-05-15T12:00:00.000Z');
let app: TestApp;
let ws: Workspace;
let owner: Person;
let session: SessionCookie;
let token: string;
let project: { id: string };
let ticket: { id: string; humanId: string };
let entry: { id: string };
let w: string;

beforeAll(async () => {
  app = await startTestApp({ now: () => NOW });
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  owner = await makeUser(sql, ws, { role: 'owner' });
  project = await makeProject(sql, ws, { members: [{ person: owner }] });
  ticket = await makeTicket(sql, ws, { projectId: project.id, reporterId: owner.id, title: 'Original title' });
  await makePeriod(sql, ws, { start: '2024-05-01', end: '2024-05-31' });
  entry = await makeTimeEntry(sql, ws, { ticketId: ticket.id, userId: owner.id, spentOn: '2024-05-14' });
  session = await login(app, owner.email, owner.password);
  token = (await makeToken(sql, ws, owner)).token;
  w = `/api/w/${ws.slug}`;
});
afterAll(() => app.close());

describe('NUL and lone surrogates (defects 4 and 5)', () => {
  const BAD = { nul: 'a\u0000b', surrogate: 'x\ud800y', lowSurrogate: 'x\udc00y' };
  type Case = { name: string; method: string; path: () => string; body: (bad: string) => unknown; field: string; auth: 'token' | 'session' | 'none' };
  const cases: Case[] = [
    {
      name: 'ticket title (create)',
      method: 'POST',
      path: () => `${w}/tickets`,
      body: (b) => ({ projectId: project.id, title: b }),
      field: 'title',
      auth: 'token',
    },
    {
      name: 'ticket title (update)',
      method: 'PATCH',
      path: () => `${w}/tickets/${ticket.humanId}`,
      body: (b) => ({ title: b }),
      field: 'title',
      auth: 'token',
    },
    {
      name: 'description',
      method: 'PATCH',
      path: () => `${w}/tickets/${ticket.humanId}`,
      body: (b) => ({ description: b }),
      field: 'description',
      auth: 'token',
    },
    {
      name: 'billingDescription',
      method: 'PATCH',
      path: () => `${w}/tickets/${ticket.humanId}`,
      body: (b) => ({ billingDescription: b }),
      field: 'billingDescription',
      auth: 'session',
    },
    { name: 'comment body', method: 'POST', path: () => `${w}/tickets/${ticket.humanId}/comments`, body: (b) => ({ body: b }), field: 'body', auth: 'token' },
    {
      name: 'time note (log)',
      method: 'POST',
      path: () => `${w}/time`,
      body: (b) => ({ ticketId: ticket.id, spentOn: '2024-05-14', minutes: 30, note: b }),
      field: 'note',
      auth: 'token',
    },
    { name: 'time note (edit)', method: 'PATCH', path: () => `${w}/time/${entry.id}`, body: (b) => ({ note: b }), field: 'note', auth: 'session' },
    { name: 'token name', method: 'POST', path: () => `${w}/tokens`, body: (b) => ({ name: b, scopes: ['read'] }), field: 'name', auth: 'session' },
    { name: 'category name', method: 'POST', path: () => `${w}/categories`, body: (b) => ({ name: b }), field: 'name', auth: 'session' },
    {
      name: 'code-host url',
      method: 'POST',
      path: () => `${w}/tickets/${ticket.humanId}/codehost`,
      body: (b) => ({ repo: 'acme/web', url: `https://github.com/acme/web/pull/1${b}` }),
      field: 'url',
      auth: 'token',
    },
    {
      name: 'login email',
      method: 'POST',
      path: () => '/api/auth/login',
      body: (b) => ({ email: `${b}@example.test`, password: 'whatever' }),
      field: 'email',
      auth: 'none',
    },
    {
      name: 'a nested array item',
      method: 'PATCH',
      path: () => `${w}/tickets/${ticket.humanId}`,
      body: (b) => ({ labelIds: ['x', b] }),
      field: 'labelIds.1',
      auth: 'token',
    },
  ];

  for (const c of cases) {
    for (const [kind, bad] of Object.entries(BAD)) {
      it(`${c.name}: ${kind} is 400 invalid_characters and changes nothing`, async () => {
        const before = await tableState(app.db.sql);
        const auth = c.auth === 'token' ? { token } : c.auth === 'session' ? { session } : {};
        const res = await app.call(c.method, c.path(), { ...auth, body: c.body(bad) });
        expectRefused(res, 400, 'invalid', { reason: 'invalid_characters', field: c.field });
        expect(await tableState(app.db.sql)).toEqual(before);
      });
    }
  }

  it('the same text without the bad character is accepted (the rule refuses only NUL and lone surrogates)', async () => {
    const res = await app.call('PATCH', `${w}/tickets/${ticket.humanId}`, { token, body: { title: 'Emoji 😀 and ümlauts' } });
    expect(res.status).toBe(200);
    expect(res.body.title).toBe('Emoji 😀 and ümlauts');
  });

  it('a NUL in a query string (q on /tickets and /board, any parameter) is 400', async () => {
    const before = await tableState(app.db.sql);
    expectRefused(await app.call('GET', `${w}/tickets?q=a%00b`, { token }), 400, 'invalid', { reason: 'invalid_characters', field: 'q' });
    expectRefused(await app.call('GET', `${w}/board?q=%00`, { token }), 400, 'invalid', { reason: 'invalid_characters', field: 'q' });
    expectRefused(await app.call('GET', `${w}/tickets?stateIds=ok&stateIds=x%00`, { token }), 400, 'invalid', {
      reason: 'invalid_characters',
      field: 'stateIds.1',
    });
    expectRefused(await app.call('GET', `${w}/time?from=2024-05-01%00&to=2024-05-31`, { token }), 400, 'invalid', { reason: 'invalid_characters' });
    expect(await tableState(app.db.sql)).toEqual(before);
  });

  it('a NUL in the path (a {ref}) is 400', async () => {
    expectRefused(await app.call('GET', `${w}/tickets/WEB%00-1`, { token }), 400, 'invalid', { reason: 'invalid_characters', field: 'path' });
    expectRefused(await app.call('PATCH', `${w}/tickets/a%00`, { token, body: { title: 'x' } }), 400, 'invalid', {
      reason: 'invalid_characters',
      field: 'path',
    });
  });

  it('a bad character in a key, and JSON nested deeper than 32 levels, are refused', async () => {
    const key = await app.call('PATCH', `${w}/tickets/${ticket.humanId}`, {
      token,
      rawBody: '{"ti\\u0000tle":"x"}',
      headers: { 'content-type': 'application/json' },
    });
    expectRefused(key, 400, 'invalid', { reason: 'invalid_characters' });
    const deep = await app.call('PATCH', `${w}/tickets/${ticket.humanId}`, {
      token,
      rawBody: `{"title":${'['.repeat(40)}${']'.repeat(40)}}`,
      headers: { 'content-type': 'application/json' },
    });
    expectRefused(deep, 400, 'invalid', { reason: 'too_deep' });
  });

  it('a NUL in a multipart text field of an upload is 400 and stores nothing', async () => {
    const before = await tableState(app.db.sql);
    const form = new FormData();
    form.append('file', new Blob(['hello']), 'a.txt');
    form.append('audience', 'internal\u0000');
    const res = await fetch(`${app.base}${w}/tickets/${ticket.humanId}/attachments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    });
    expectRefused({ status: res.status, body: await res.json() }, 400, 'invalid', { reason: 'invalid_characters', field: 'audience' });
    expect(await tableState(app.db.sql)).toEqual(before);
  });

  it('invalid UTF-8 bytes in a body arrive as U+FFFD and are stored as such (no 500)', async () => {
    const body = Buffer.concat([Buffer.from('{"title":"bad '), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const res = await rawRequest(app.base, 'PATCH', `${w}/tickets/${ticket.humanId}`, {
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body,
    });
    expect(res.status).toBe(200);
    expect(res.body.title).toBe('bad \ufffd\ufffd');
  });
});

describe('one date schema, 1900-01-01 to 9999-12-31 (defect 6)', () => {
  const BAD_DATES = ['0000-01-01', '0001-01-01', '1899-12-31', '10000-01-01', '2023-02-29', '2024-5-1'];

  for (const d of BAD_DATES) {
    it(`${d} is 400 validation on every date field, with the field named`, async () => {
      const before = await tableState(app.db.sql);
      const tries: [string, string, unknown, string, 'token' | 'session'][] = [
        ['POST', `${w}/tickets`, { projectId: project.id, title: 'x', dueDate: d }, 'dueDate', 'token'],
        ['POST', `${w}/tickets`, { projectId: project.id, title: 'x', startDate: d }, 'startDate', 'token'],
        ['PATCH', `${w}/tickets/${ticket.humanId}`, { dueDate: d }, 'dueDate', 'token'],
        ['PATCH', `${w}/tickets/${ticket.humanId}`, { startDate: d }, 'startDate', 'token'],
        ['POST', `${w}/time`, { ticketId: ticket.id, spentOn: d, minutes: 30 }, 'spentOn', 'token'],
        ['PATCH', `${w}/time/${entry.id}`, { spentOn: d }, 'spentOn', 'session'],
        ['POST', `${w}/periods`, { periodStart: d }, 'periodStart', 'session'],
        ['GET', `${w}/time?from=${d}&to=2024-05-31`, undefined, 'from', 'token'],
        ['GET', `${w}/time?from=2024-05-01&to=${d}`, undefined, 'to', 'token'],
      ];
      for (const [method, path, body, field, auth] of tries) {
        const res = await app.call(method, path, { ...(auth === 'token' ? { token } : { session }), body });
        expectRefused(res, 400, 'invalid', { reason: 'validation', field });
      }
      // POST /periods is audited, refusals too (an administrative write): an audit row of the refusal is not a change
      expect(await changedByRefusal(app.db.sql, before)).toEqual([]);
    });
  }

  it('the range ends are accepted where a date may be anything: 1900-01-01 and 9999-12-31 as due and start dates', async () => {
    for (const d of ['1900-01-01', '9999-12-31']) {
      const res = await app.call('PATCH', `${w}/tickets/${ticket.humanId}`, { token, body: { startDate: d, dueDate: d } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ startDate: d, dueDate: d });
    }
    const list = await app.call('GET', `${w}/tickets?due=overdue`, { token });
    expect(list.status).toBe(200);
  });

  it('GET /time at the end of the range answers, and POST /time on 9999-12-31 is 400 date_out_of_range', async () => {
    const week = await app.call('GET', `${w}/time?from=9999-12-01&to=9999-12-31`, { token });
    expect(week.status).toBe(200);
    expect(week.body.entries).toEqual([]);
    const before = await tableState(app.db.sql);
    const far = await app.call('POST', `${w}/time`, { token, body: { ticketId: ticket.id, spentOn: '9999-12-31', minutes: 30 } });
    expectRefused(far, 400, 'invalid', { reason: 'date_out_of_range', field: 'spentOn' });
    const move = await app.call('PATCH', `${w}/time/${entry.id}`, { session, body: { spentOn: '9999-12-31' } });
    expect(move.status).toBeGreaterThanOrEqual(400);
    expect(move.status).toBeLessThan(500);
    expect(await tableState(app.db.sql)).toEqual(before);
  });

  it('periods open month by month up to the horizon (366 days after today)', async () => {
    const res = await app.call('POST', `${w}/time`, { token, body: { ticketId: ticket.id, spentOn: '2025-05-16', minutes: 15 } });
    expect(res.status).toBe(201);
    const periods = await app.db.sql<{ start: string; end: string }[]>`
      select period_start::text as start, period_end::text as end from periods where workspace_id = ${ws.id} order by period_start`;
    expect(periods).toHaveLength(13);
    expect(periods.at(-1)).toEqual({ start: '2025-05-01', end: '2025-05-31' });
  });

  it('a period after December 9999 is 400 date_out_of_range, not a 500', async () => {
    const other = await makeWorkspace(app.db.sql);
    const admin = await makeUser(app.db.sql, other, { role: 'owner' });
    const s = await login(app, admin.email, admin.password);
    const first = await app.call('POST', `/api/w/${other.slug}/periods`, { session: s, body: { periodStart: '9999-12-01' } });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ periodStart: '9999-12-01', periodEnd: '9999-12-31' });
    const before = await tableState(app.db.sql);
    expectRefused(await app.call('POST', `/api/w/${other.slug}/periods`, { session: s, body: {} }), 400, 'invalid', { reason: 'date_out_of_range' });
    expect(await changedByRefusal(app.db.sql, before)).toEqual([]);
  });

  it('a token expiry that an offset carries past 9999 is 400 validation', async () => {
    const res = await app.call('POST', `${w}/tokens`, { session, body: { name: 'far', scopes: ['read'], expiresAt: '9999-12-31T23:59:59-05:00' } });
    expectRefused(res, 400, 'invalid', { reason: 'validation', field: 'expiresAt' });
  });
});
