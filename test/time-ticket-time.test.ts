import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../src/core/auth/principal.ts';
import type { Ctx } from '../src/core/ctx.ts';
import { loadTicket } from '../src/core/tickets/load.ts';
import { ticketTimeSql, type TicketTime } from '../src/core/time/ticket-time.ts';
import { makeTicket, makeTimeEntry, makeUser, type Person } from './helpers/factories.ts';
import { START, timeWorld, type TimeWorld } from './time-world.ts';

let w: TimeWorld;
let ticket: { id: string };

const ctxOf = (who: Person, clientId: string | null = null): Ctx => ({
  sql: w.app.db.sql,
  now: () => START,
  principal: {
    workspaceId: w.ws.id,
    slug: w.ws.slug,
    identityId: who.id,
    name: 'someone',
    role: who.role,
    clientId,
    via: 'token',
    scopes: new Set(['read']),
    projectIds: null,
    tokenId: null,
    tokenKind: 'delegated',
    sessionId: null,
    reauthAt: null,
    source: 'api',
    door: 'rest',
  } satisfies Principal,
});
/** The page's `time` column (ticketTimeSql), selected on its own for ticket `id`. */
async function ticketTime(ctx: Ctx, id: string, facts: Parameters<typeof ticketTimeSql>[2]): Promise<TicketTime | null> {
  const [row] = await ctx.sql<{ time: TicketTime | null }[]>`select ${ticketTimeSql(ctx, ctx.sql`${id}::uuid`, facts)} as time`;
  return row!.time;
}
const timeFor = async (ctx: Ctx) => ticketTime(ctx, ticket.id, await loadTicket(ctx, ticket.id));

beforeAll(async () => {
  w = await timeWorld();
  const sql = w.app.db.sql;
  ticket = await makeTicket(sql, w.ws, { projectId: w.project.id });
  const add = (o: Partial<Parameters<typeof makeTimeEntry>[2]> & { spentOn: string }) =>
    makeTimeEntry(sql, w.ws, { ticketId: ticket.id, userId: w.member.id, ...o });
  await add({ spentOn: '2024-05-10', minutes: 60 });
  await add({ spentOn: '2024-05-10', minutes: 30, billable: false });
  const billed = await add({ spentOn: '2024-04-10', minutes: 45, billed: true });
  await add({ spentOn: '2024-05-15', minutes: -15, correctsEntryId: billed.id });
  await add({ spentOn: '2024-05-11', minutes: 20, billingClientId: w.clients.collab });
});
afterAll(() => w.app.close());

describe('ticketTime (the TicketPage time object)', () => {
  it('workspace users read logged, billable and unbilled minutes, corrections netted in', async () => {
    for (const who of [w.member, w.limited, w.owner]) {
      expect(await timeFor(ctxOf(who))).toEqual({ loggedMinutes: 140, billableMinutes: 110, unbilledMinutes: 65 });
    }
  });

  it("an elevated client user on the client's project reads billable and unbilled minutes of their own client only", async () => {
    expect(await timeFor(ctxOf(w.elevated, w.clients.main))).toEqual({ billableMinutes: 90, unbilledMinutes: 45 });
    const collabUser = await makeUser(w.app.db.sql, w.ws, { role: 'client_elevated', clientId: w.clients.collab });
    expect(await timeFor(ctxOf(collabUser, w.clients.collab))).toEqual({ billableMinutes: 20, unbilledMinutes: 20 });
  });

  it('an ordinary client user cannot read time: null', async () => {
    // the reporter of w.ticket is the client user; make them a viewer here so the ticket is visible
    await w.app.db.sql`insert into ticket_viewers (ticket_id, identity_id) values (${ticket.id}, ${w.client.id})`;
    expect(await timeFor(ctxOf(w.client, w.clients.main))).toBeNull();
  });

  it('a ticket without time reads zeros', async () => {
    const empty = await makeTicket(w.app.db.sql, w.ws, { projectId: w.project.id });
    const ctx = ctxOf(w.member);
    expect(await ticketTime(ctx, empty.id, await loadTicket(ctx, empty.id))).toEqual({ loggedMinutes: 0, billableMinutes: 0, unbilledMinutes: 0 });
  });
});

describe('GET /tickets/{ref} shows the time object', () => {
  it('with loggedMinutes for workspace users, without for an elevated client, null for a client', async () => {
    const sql = w.app.db.sql;
    const { makeToken } = await import('./helpers/factories.ts');
    const get = async (who: Person) => {
      const { token } = await makeToken(sql, w.ws, who);
      const res = await w.app.call('GET', `/api/w/${w.ws.slug}/tickets/${ticket.id}`, { token });
      expect(res.status).toBe(200);
      return res.body.time;
    };
    expect(await get(w.member)).toEqual({ loggedMinutes: 140, billableMinutes: 110, unbilledMinutes: 65 });
    expect(await get(w.elevated)).toEqual({ billableMinutes: 90, unbilledMinutes: 45 });
    await sql`insert into ticket_viewers (ticket_id, identity_id) values (${ticket.id}, ${w.client.id}) on conflict do nothing`;
    expect(await get(w.client)).toBeNull();
  });
});
