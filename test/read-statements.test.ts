import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../src/core/auth/principal.ts';
import type { Ctx } from '../src/core/ctx.ts';
import { getBoard } from '../src/core/board/board.ts';
import { getBoardColumn } from '../src/core/board/column.ts';
import { getMyWork } from '../src/core/board/my.ts';
import { runOp } from '../src/core/operation.ts';
import { recordEvent } from '../src/core/tickets/events.ts';
import { getTicketPage } from '../src/core/tickets/get.ts';
import { listTickets } from '../src/core/tickets/list.ts';
import { connect, type Db } from '../src/db/connect.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { addViewers, makeComment, makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

/**
 * The read paths' statements (ticket page, list, board, board column, my work): what makes them
 * cheap to run and to plan, checked on the statement text (no timing), and that the names they
 * show are the workspace's (a mail-learned name in contact_names wins over the identity's).
 */

let app: TestApp;
let ws: Workspace;
let owner: Person;
let named: Person;
let counting: Db;
let statements: string[] = [];

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  owner = await makeUser(sql, ws, { role: 'owner' });
  named = await makeUser(sql, ws, { role: 'member', name: 'Identity Name' });
  counting = connect(app.db.url, { max: 1, debug: (_conn, query) => statements.push(query) });
  await counting`select 1`;
});
afterAll(async () => {
  await counting.end();
  await app.close();
});

async function principalOf(person: Person): Promise<Principal> {
  const { token } = await makeToken(app.db.sql, ws, person);
  return app.verifier.verify(token, ws.slug, new Date());
}

async function captured<T>(principal: Principal, fn: (ctx: Ctx) => Promise<T>): Promise<{ result: T; text: string }> {
  statements = [];
  const result = await fn({ sql: counting, principal, now: () => new Date() });
  return { result, text: statements.join('\n;\n') };
}

describe('read statements', () => {
  it('show the workspace’s name for every person, without calling person_name() per row, and carry page sizes as literals', async () => {
    const sql = app.db.sql;
    const project = await makeProject(sql, ws, { members: [{ person: named }] });
    const t = await makeTicket(sql, ws, { projectId: project.id, reporterId: named.id, assigneeId: named.id, dueDate: '2000-01-01' });
    await makeComment(sql, ws, { ticketId: t.id, body: 'hello', authorId: named.id });
    await addViewers(sql, t.id, [named.id], named.id);
    await recordEvent(
      sql,
      { workspaceId: ws.id, ticketId: t.id, kind: 'field_changed', actorId: named.id, payload: { field: 'title', old: 'a', new: 'b' } },
      new Date(),
    );
    await sql`insert into attachments (workspace_id, ticket_id, filename, content_type, size, audience, data, uploaded_by)
              values (${ws.id}, ${t.id}, 'a.txt', 'text/plain', 1, 'client', '\\x41'::bytea, ${named.id})`;
    await sql`insert into contact_names (workspace_id, identity_id, name) values (${ws.id}, ${named.id}, 'Workspace Name')`;
    const [{ shown }] = await sql<[{ shown: string }]>`select person_name(${ws.id}, ${named.id}, 'Identity Name') as shown`;
    expect(shown).toBe('Workspace Name');

    const p = await principalOf(owner);
    const page = await captured(p, (ctx) => getTicketPage(ctx, t.humanId));
    const list = await captured(p, (ctx) => runOp(listTickets, ctx, { limit: 7 }));
    const board = await captured(p, (ctx) => runOp(getBoard, ctx, { limit: 7 }));
    const column = await captured(p, (ctx) => runOp(getBoardColumn, ctx, { stateId: page.result.state.id, limit: 7 }));
    const my = await captured(await principalOf(named), (ctx) => runOp(getMyWork, ctx, {}));

    const person = { id: named.id, name: 'Workspace Name' };
    expect(page.result).toMatchObject({ reporter: person, assignee: person });
    expect(page.result.comments[0]!.author).toMatchObject(person);
    expect(page.result.viewers.find((v) => v.identityId === named.id)).toMatchObject({ name: 'Workspace Name', addedBy: person });
    expect(page.result.events.find((e) => e.kind === 'field_changed')!.actor).toEqual(person);
    expect(page.result.attachments[0]!.uploadedBy).toEqual(person);
    expect(list.result.items.find((i) => i.id === t.id)).toMatchObject({ reporter: person, assignee: person });
    expect(board.result.columns.flatMap((c) => c.tickets).find((i) => i.id === t.id)).toMatchObject({ reporter: person, assignee: person });
    expect(column.result.items.find((i) => i.id === t.id)).toMatchObject({ reporter: person });
    for (const l of [my.result.assigned, my.result.reported, my.result.watching, my.result.dueSoon])
      expect(l.find((i) => i.id === t.id)).toMatchObject({ reporter: person });

    // person_name() holds a subquery, so PostgreSQL cannot inline it: each call ran the function's
    // own executor (about 15 us; 300 per ticket page, 800 per board). The read paths write the same
    // lookup out in the statement instead.
    for (const s of [page, list, board, column, my]) expect(s.text).not.toMatch(/person_name\(/);
    // a page size as a parameter (`limit $n`) makes the generic plan assume a tenth of the rows, so
    // PostgreSQL re-planned the list and the board on every call
    for (const s of [list, board, column]) expect(s.text).not.toMatch(/limit \$\d/);
    expect(list.text).toMatch(/limit 8\b/);
    expect(board.text).toMatch(/limit 7\b/);
  });
});
