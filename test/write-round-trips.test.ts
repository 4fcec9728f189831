import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Db } from '../src/db/connect.ts';
import { TokenVerifier } from '../src/core/auth/token-verifier.ts';
import type { Principal } from '../src/core/auth/principal.ts';
import type { Ctx } from '../src/core/ctx.ts';
import { runOp } from '../src/core/operation.ts';
import { createTicket } from '../src/core/tickets/create.ts';
import { takeNumber } from '../src/core/tickets/numbering.ts';
import { logTime } from '../src/core/time/log.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makePeriod, makeProject, makeToken, makeUser, makeWorkspace, type Workspace } from './helpers/factories.ts';

/**
 * Issue 25, "Load": under 200 clients the writes' cost is mostly round trips (each one CPU in
 * both the web process and PostgreSQL). These pin the statement shapes the writes send now: a
 * create inserts its ticket with the updated_at the events' touch would give instead of updating
 * the row it just wrote, and a time entry on a ticket named by UUID holds the ticket in the same
 * round trip as its reads. Statements are seen through a one-connection postgres.js `debug`.
 */
let app: TestApp;
let ws: Workspace;
let principal: Principal;
let project: { id: string; key: string };
let seen: string[];
let traced: Db;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  const owner = await makeUser(sql, ws, { role: 'owner' });
  project = await makeProject(sql, ws);
  const token = (await makeToken(sql, ws, owner)).token;
  principal = await new TokenVerifier(sql, 0).verify(token, null, new Date());
  const today = new Date().toISOString().slice(0, 10);
  await makePeriod(sql, ws, { start: `${today.slice(0, 8)}01`, end: '2099-12-31' });
  seen = [];
  traced = connect(app.db.url, { max: 1, debug: (_c, query) => seen.push(query.replace(/\s+/g, ' ').trim()) });
});
afterAll(async () => {
  await traced?.end();
  await app.close();
});

const ctx = (): Ctx => ({ sql: traced, principal, now: () => new Date() });

describe('write statements (issue 25, load)', () => {
  it('a create inserts its ticket with updatedAt = createdAt + 1 ms and sends no UPDATE of that row', async () => {
    seen.length = 0;
    const created = await runOp(createTicket, ctx(), { projectId: project.id, title: 'round trips' });
    const updates = seen.filter((q) => /^update tickets\b/i.test(q));
    expect(updates).toEqual([]);
    // the answer and the row are what the touch used to make them: one millisecond after creation
    expect(new Date(created.updatedAt).getTime() - new Date(created.createdAt).getTime()).toBe(1);
    const [row] = await app.db.sql<{ c: Date; u: Date }[]>`select created_at as c, updated_at as u from tickets where id = ${created.id}`;
    expect(row!.u.getTime() - row!.c.getTime()).toBe(1);
    const events = await app.db.sql`select kind from ticket_events where ticket_id = ${created.id}`;
    expect(events.map((e) => e.kind)).toEqual(['created']);
  });

  it("a create numbers its workspace's read mark once, and the mark still moves with every commit", async () => {
    const sql = app.db.sql;
    const seq = async () => Number((await sql<{ v: string }[]>`select last_value::text as v from read_mark_seq`)[0]!.v);
    const mark = async () => (await sql<{ n: string }[]>`select n::text from read_marks where workspace_id = ${ws.id}`)[0]?.n;
    await runOp(createTicket, ctx(), { projectId: project.id, title: 'first' });
    const [seq0, mark0] = [await seq(), await mark()];
    const created = await runOp(createTicket, ctx(), { projectId: project.id, title: 'numbered once' });
    // the ticket insert, the board counters settled at commit and the change feed's seq all note
    // the workspace: numbered once (sql/098 numbered it again for the notes made while the commit
    // ran, and once more for the number taken in a statement of its own)
    expect(await seq()).toBe(seq0 + 1);
    const mark1 = await mark();
    expect(mark1).not.toBe(mark0);
    // a later transaction moves it again (the setting that remembers the numbering ended with its transaction)
    await runOp(logTime, ctx(), { ticketId: created.id, spentOn: new Date().toISOString().slice(0, 10), minutes: 5 });
    expect(await mark()).not.toBe(mark1);
    expect(await seq()).toBe(seq0 + 2);
    expect((await sql`select count(*)::int as n from read_mark_pending`)[0]!.n).toBe(0);
  });

  it('taking a ticket number moves no read mark; any other change to the project does', async () => {
    const sql = app.db.sql;
    const mark = async () => (await sql<{ n: string }[]>`select n::text from read_marks where workspace_id = ${ws.id}`)[0]?.n;
    const before = await mark();
    await takeNumber(sql, ws.id, project.id);
    expect(await mark()).toBe(before);
    await sql`update projects set name = name || ' (renamed)', next_number = next_number + 1 where id = ${project.id}`;
    expect(await mark()).not.toBe(before);
  });

  it('logging time on a ticket named by UUID holds the ticket first, with its reads, not after them', async () => {
    const created = await runOp(createTicket, ctx(), { projectId: project.id, title: 'meetings' });
    seen.length = 0;
    const today = new Date().toISOString().slice(0, 10);
    await runOp(logTime, ctx(), { ticketId: created.id, spentOn: today, minutes: 15 });
    const body = seen.filter((q) => !/^(begin|commit)$/i.test(q));
    expect(body[0]).toMatch(/^select id from tickets where id = any\(\$1::uuid\[\]\) order by id for key share$/);
    expect(body.filter((q) => /for key share/.test(q))).toHaveLength(1);
    const [entry] = await app.db.sql`select count(*)::int as n from time_entries where ticket_id = ${created.id}`;
    expect(entry!.n).toBe(1);
  });

  it('logging time on an unknown UUID still answers 404 (the early hold finds nothing, the load refuses)', async () => {
    const today = new Date().toISOString().slice(0, 10);
    await expect(runOp(logTime, ctx(), { ticketId: '00000000-0000-4000-8000-000000000001', spentOn: today, minutes: 15 })).rejects.toMatchObject({
      status: 404,
    });
  });
});
