import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTicket, makeTimeEntry } from './helpers/factories.ts';
import { expectError, timeWorld, type TimeWorld } from './time-world.ts';

let w: TimeWorld;

beforeAll(async () => {
  w = await timeWorld();
});
afterAll(() => w.app.close());

/** DELETE /tickets/{ref} refuses while time on the ticket is locked (the rule lives in src/core/time/locked.ts). */
describe('DELETE /tickets/{ref} and time', () => {
  const setup = async (entries: { spentOn: string; billed?: boolean }[]) => {
    const sql = w.app.db.sql;
    const ticket = await makeTicket(sql, w.ws, { projectId: w.project.id });
    for (const e of entries) await makeTimeEntry(sql, w.ws, { ticketId: ticket.id, userId: w.member.id, ...e });
    return ticket;
  };
  const del = async (ref: string) => w.app.call('DELETE', `/api/w/${w.ws.slug}/tickets/${ref}`, { session: await w.session(w.owner) });
  const count = async (ticketId: string) => (await w.app.db.sql`select count(*)::int as n from time_entries where ticket_id = ${ticketId}`)[0]!.n;

  it('409 ticket_billed when any entry is billed', async () => {
    const ticket = await setup([{ spentOn: '2024-05-10' }, { spentOn: '2024-05-11', billed: true }]);
    expectError(await del(ticket.humanId), 409, 'conflict', 'ticket_billed');
    expect(await count(ticket.id)).toBe(2);
  });

  it('409 period_closed when any entry lies in a closed period', async () => {
    const ticket = await setup([{ spentOn: '2024-05-10' }, { spentOn: '2024-04-10' }]);
    expectError(await del(ticket.humanId), 409, 'conflict', 'period_closed');
    expect(await count(ticket.id)).toBe(2);
  });

  it('deletes the ticket with its open-period time', async () => {
    const ticket = await setup([{ spentOn: '2024-05-10' }, { spentOn: '2024-05-12' }]);
    const res = await del(ticket.humanId);
    expect(res.status).toBe(200);
    expect(await count(ticket.id)).toBe(0);
  });
});
