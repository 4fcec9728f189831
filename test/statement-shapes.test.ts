import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Ctx } from '../src/core/ctx.ts';
import { runOp } from '../src/core/operation.ts';
import { readTicketPage } from '../src/core/tickets/read.ts';
import { connect, type Db } from '../src/db/connect.ts';
import { checkStatementShapes, StatementShapes } from '../src/db/statement-shapes.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeComment, makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Workspace } from './helpers/factories.ts';

/**
 * Statements built once per shape (src/db/statement-shapes.ts): later calls send the remembered
 * text with the slots' values put in, as the same prepared statement; the tests' own check (every
 * call built afresh and compared, `checkStatementShapes`) is switched off here so the
 * remembered path itself runs.
 */

let app: TestApp;
let ws: Workspace;
let sent: { query: string; params: unknown[] }[] = [];
let observed: Db;

beforeAll(async () => {
  app = await startTestApp();
  ws = await makeWorkspace(app.db.sql);
  observed = connect(app.db.url, { max: 1, debug: (_c, query, params) => sent.push({ query, params }) });
  await observed`select 1`; // its first statement also reads the array types
});
afterAll(async () => {
  await observed.end();
  await app.close();
});
afterEach(() => checkStatementShapes(true));

const remembering = () => checkStatementShapes(false);

describe('StatementShapes', () => {
  it('builds a shape once, then sends its text with each call’s slot values as the same prepared statement', async () => {
    remembering();
    const shapes = new StatementShapes();
    const sql = observed;
    let builds = 0;
    const read = (id: string) =>
      shapes.run(
        sql,
        'k',
        { id },
        ({ id: slot }) => {
          builds++;
          return sql`select ${slot}::text as id, ${'fixed'}::text as other, ${[1, 2]}::int[] as arr`;
        },
        (q) => q.then((rows) => rows[0]),
      );
    sent = [];
    expect(await read('a')).toEqual({ id: 'a', other: 'fixed', arr: [1, 2] });
    expect(await read('b')).toEqual({ id: 'b', other: 'fixed', arr: [1, 2] });
    expect(await read('c')).toEqual({ id: 'c', other: 'fixed', arr: [1, 2] });
    expect(builds).toBe(1);
    expect(new Set(sent.map((s) => s.query)).size).toBe(1);
    expect(sent.map((s) => s.params[0])).toEqual(['a', 'b', 'c']);
    // one statement prepared on the (one) connection, not one per way of sending it
    const [{ n }] = await sql<[{ n: number }]>`select count(*)::int as n from pg_prepared_statements where statement = ${sent[0]!.query}`;
    expect(n).toBe(1);
  });

  it('in the tests’ check, a builder that reads a value neither the key nor a slot names fails', async () => {
    const shapes = new StatementShapes();
    const sql = observed;
    let hidden = 'one';
    const read = (id: string) =>
      shapes.run(
        sql,
        'k',
        { id },
        ({ id: slot }) => sql`select ${slot}::text as id, ${hidden}::text as hidden`,
        (q) => q.then((rows) => rows[0]),
      );
    await read('a');
    await read('b'); // same hidden value: the check passes
    hidden = 'two';
    await expect(read('c')).rejects.toThrow(/changed with values its key and slots do not name/);
  });

  it('the ticket page from its remembered shape is each ticket’s own page, for each caller, as the object form reads it', async () => {
    remembering();
    const sql = app.db.sql;
    const owner = await makeUser(sql, ws, { role: 'owner' });
    const member = await makeUser(sql, ws, { role: 'member' });
    const projectId = (await makeProject(sql, ws, { members: [{ person: member }] })).id;
    const tickets = [];
    for (const title of ['First', 'Second', 'Third']) {
      const t = await makeTicket(sql, ws, { projectId, reporterId: member.id, title, description: `${title} _description_` });
      await makeComment(sql, ws, { ticketId: t.id, body: `on ${title}`, authorId: member.id, audience: 'internal' });
      tickets.push({ ...t, title });
    }
    for (const person of [owner, member, owner]) {
      const { token } = await makeToken(sql, ws, person);
      const principal = await app.verifier.verify(token, ws.slug, new Date());
      const ctx: Ctx = { sql, principal, now: () => new Date() };
      for (const t of [...tickets, tickets[0]!]) {
        const res = await app.call('GET', `/api/w/${ws.slug}/tickets/${t.id}`, { token });
        expect(res.status).toBe(200);
        const read = await runOp(readTicketPage, ctx, { ref: t.id });
        if (read.status !== 200) throw new Error('expected the page');
        expect(res.body).toEqual(JSON.parse(JSON.stringify(read.page)));
        expect(res.body.title).toBe(t.title);
      }
    }
  });
});
