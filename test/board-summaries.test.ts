import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getBoard } from '../src/core/board/board.ts';
import { getMyWork } from '../src/core/board/my.ts';
import { runOp } from '../src/core/operation.ts';
import { getTicketSummary, type TicketSummary } from '../src/core/tickets/summary.ts';
import { makeComment, makeUser } from './helpers/factories.ts';
import { boardWorld, NOW, type BoardWorld } from './board-world.ts';

/**
 * The board and "my work" build their summaries with the workspace's kinds, states and priorities
 * prebuilt once per statement (summaryJoinsPrebuilt); the list and the single summary join them per
 * ticket. Every summary must be the same either way, for every caller.
 */
let w: BoardWorld;

beforeAll(async () => {
  w = await boardWorld();
  const sql = w.app.db.sql;
  // comments of both audiences, so client users' counts differ from the kept count
  for (const [i, t] of w.tickets.entries()) {
    if (i % 3 === 0) await makeComment(sql, w.ws, { ticketId: t.id, body: 'internal', audience: 'internal' });
    if (i % 4 === 0) await makeComment(sql, w.ws, { ticketId: t.id, body: 'for the client', audience: 'client' });
  }
  // a parent the client user cannot see: parentId is left out for them
  await sql`update tickets set parent_id = ${w.tickets[1]!.id} where id = ${w.tickets[0]!.id}`;
});

afterAll(async () => {
  await w?.app.close();
});

describe('board and /my summaries', () => {
  it('equal the list’s summary of the same ticket, for every caller', async () => {
    const elevated = await makeUser(w.app.db.sql, w.ws, { role: 'client_elevated', clientId: w.clientA.id });
    for (const person of [w.owner, w.member, w.clientUser, elevated]) {
      const principal = await w.app.verifier.verify(await w.token(person), w.ws.slug, new Date());
      const ctx = { sql: w.app.db.sql, principal, now: () => NOW };
      const board = await runOp(getBoard, ctx, {});
      const my = await runOp(getMyWork, ctx, {});
      const shown: TicketSummary[] = [...board.columns.flatMap((c) => c.tickets), ...my.assigned, ...my.reported, ...my.watching, ...my.dueSoon];
      expect(shown.length).toBeGreaterThan(0);
      for (const s of shown) expect(s).toEqual(await getTicketSummary(ctx, s.id));
    }
  });
});
