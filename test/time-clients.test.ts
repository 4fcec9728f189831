import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCategory, makeTimeEntry } from './helpers/factories.ts';
import { expectError, timeWorld, type TimeWorld } from './time-world.ts';

let w: TimeWorld;

beforeAll(async () => {
  w = await timeWorld();
});
afterAll(() => w.app.close());

/** "A client user on any time operation is 403": every route of the area, by session and by token. */
describe('client users on every time route', () => {
  it('get 403 forbidden and change nothing', async () => {
    const sql = w.app.db.sql;
    const entry = await makeTimeEntry(sql, w.ws, { ticketId: w.ticket.id, userId: w.member.id, spentOn: '2024-05-10' });
    const closed = await makeTimeEntry(sql, w.ws, { ticketId: w.ticket.id, userId: w.member.id, spentOn: '2024-04-10' });
    const cat = await makeCategory(sql, w.ws);
    const api = `/api/w/${w.ws.slug}`;
    const routes: [string, string, unknown?][] = [
      ['GET', `${api}/time?from=2024-05-01&to=2024-05-31`],
      ['POST', `${api}/time`, { ticketId: w.ticket.id, spentOn: '2024-05-10', minutes: 5 }],
      ['PATCH', `${api}/time/${entry.id}`, { minutes: 5 }],
      ['DELETE', `${api}/time/${entry.id}`],
      ['POST', `${api}/time/${closed.id}/corrections`, { minutes: -5 }],
      ['POST', `${api}/time/tickets/${w.ticket.id}/reattribute`],
      ['GET', `${api}/periods`],
      ['POST', `${api}/periods`, {}],
      ['POST', `${api}/periods/${w.periods.may}/close`],
      ['POST', `${api}/periods/${w.periods.april}/reopen`],
      ['GET', `${api}/categories`],
      ['POST', `${api}/categories`, { name: 'Client made' }],
      ['PATCH', `${api}/members/${w.member.id}`, { timezone: 'Europe/Paris' }],
      ['PATCH', `${api}/members/${w.client.id}`, { timezone: 'Europe/Paris' }],
      ['PUT', `${api}/projects/${w.project.id}/members/${w.member.id}/category`, { categoryId: cat.id }],
    ];
    const state = async () => ({
      entries: await sql`select id, minutes, billing_client_id, category_id from time_entries where workspace_id = ${w.ws.id} order by id`,
      periods: await sql`select id, period_start, closed_at from periods where workspace_id = ${w.ws.id} order by period_start`,
      categories: await sql`select id, name from consultant_categories where workspace_id = ${w.ws.id} order by id`,
      members: await sql`select identity_id, timezone, category_id from memberships where workspace_id = ${w.ws.id} order by identity_id`,
      projectMembers: await sql`select identity_id, category_id from project_memberships where project_id = ${w.project.id} order by identity_id`,
    });
    const before = await state();
    for (const who of [w.client, w.elevated]) {
      const session = await w.session(who);
      const token = await w.token(who, ['read', 'write', 'triage']);
      for (const [method, url, body] of routes) {
        expectError(await w.app.call(method, url, { session, body }), 403, 'forbidden');
        expectError(await w.app.call(method, url, { token, body }), 403, 'forbidden');
      }
    }
    expect(await state()).toEqual(before);
  });
});
