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
import { readTicketPage } from '../src/core/tickets/read.ts';
import { connect, type Db } from '../src/db/connect.ts';
import { refreshStoredHtml } from '../src/core/tickets/markdown-refresh.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  addViewers,
  makeClient,
  makeComment,
  makeLink,
  makeProject,
  addLabels,
  makeTicket,
  makeToken,
  makeUser,
  makeWorkspace,
  type Person,
  type Workspace,
} from './helpers/factories.ts';

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

  it('GET /tickets, /board and /my send the JSON PostgreSQL wrote, unparsed: the same answers as the operations’ object forms', async () => {
    const sql = app.db.sql;
    const project = await makeProject(sql, ws, { members: [{ person: named }] });
    for (let i = 0; i < 7; i++) {
      const t = await makeTicket(sql, ws, {
        projectId: i % 3 ? project.id : null,
        reporterId: named.id,
        assigneeId: i % 2 ? named.id : null,
        title: `Q "${i}" \\ ü`,
      });
      await sql`insert into labels (workspace_id, name) values (${ws.id}, ${`L ${i}`})`;
      await addLabels(sql, ws, t.id, [`L ${i}`]);
    }
    const ownerToken = (await makeToken(sql, ws, owner)).token;
    const namedToken = (await makeToken(sql, ws, named)).token;
    const base = `/api/w/${ws.slug}`;
    for (const [person, token] of [
      [owner, ownerToken],
      [named, namedToken],
    ] as const) {
      const p = await principalOf(person);
      const ctx: Ctx = { sql, principal: p, now: () => new Date() };
      for (const query of [{}, { limit: 2 }, { limit: 50 }, { projectId: project.id, limit: 3 }]) {
        const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();
        const list = await app.call('GET', `${base}/tickets?${qs}`, { token });
        expect(list.status).toBe(200);
        expect(list.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(list.body).toEqual(JSON.parse(JSON.stringify(await runOp(listTickets, ctx, query))));
        if (list.body.nextCursor) {
          const next = await app.call('GET', `${base}/tickets?${qs}&cursor=${list.body.nextCursor}`, { token });
          expect(next.body).toEqual(JSON.parse(JSON.stringify(await runOp(listTickets, ctx, { ...query, cursor: list.body.nextCursor }))));
        }
        const board = await app.call('GET', `${base}/board?${qs}`, { token });
        expect(board.status).toBe(200);
        expect(board.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(board.body).toEqual(JSON.parse(JSON.stringify(await runOp(getBoard, ctx, query))));
      }
      const my = await app.call('GET', `${base}/my`, { token });
      expect(my.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(my.body).toEqual(JSON.parse(JSON.stringify(await runOp(getMyWork, ctx, {}))));
    }
    // the summaries went out as PostgreSQL wrote them: each label kept as json_build_object wrote it
    // (sql/106: `"key" : value`, which JSON.stringify never writes) inside the summary written from its
    // typed row (sql/107): not parsed and serialised again in the web process
    for (const path of ['/tickets', '/board', '/my']) {
      const raw = await fetch(`${app.base}${base}${path}`, { headers: { authorization: `Bearer ${namedToken}` } });
      expect(await raw.text()).toMatch(/\{"id":"[0-9a-f-]{36}","humanId":"[^]*?"labels":\[\{"id" : "[0-9a-f-]{36}", "name" : "L \d"\}\]/);
    }
    // a board whose columns go on: the cursor the text form built reads the same next page
    const paged = await app.call('GET', `${base}/board?limit=1`, { token: ownerToken });
    const column = (paged.body as { columns: { state: { id: string }; total: number; nextCursor: string | null }[] }).columns.find((c) => c.total > 1)!;
    expect(column.nextCursor).not.toBeNull();
    const page2 = await app.call('GET', `${base}/board/${column.state.id}?limit=1&cursor=${column.nextCursor}`, { token: ownerToken });
    expect(page2.status).toBe(200);
    expect(page2.body.items).toHaveLength(1);
  });

  it('GET /tickets/{ref} sends the JSON PostgreSQL wrote, unparsed, with the rendered html, canRemove, time and permissions beside it: the same page as the object form', async () => {
    const sql = app.db.sql;
    const acme = await makeClient(sql, ws, { name: 'Acme "Quoted" \\ Co' });
    const clientUser = await makeUser(sql, ws, { role: 'client', clientId: acme.id, name: 'Carla Client' });
    const project = await makeProject(sql, ws, { billingClientId: acme.id, members: [{ person: named }] });
    const hostile = 'Hi <script>alert(1)</script> **bold** [x](javascript:alert(1)) ![pixel](https://track.example/p.gif)\n\n\u2028 "q" \\ \u001f\u001e end';
    const t = await makeTicket(sql, ws, {
      projectId: project.id,
      reporterId: clientUser.id,
      assigneeId: named.id,
      title: 'Page "text" \\ ü',
      description: hostile,
    });
    const other = await makeTicket(sql, ws, { projectId: project.id, reporterId: named.id, title: 'Other' });
    const child = await makeTicket(sql, ws, { projectId: project.id, reporterId: named.id, title: 'Child' });
    await sql`update tickets set parent_id = ${t.id} where id = ${child.id}`;
    await makeLink(sql, ws, { sourceId: t.id, targetId: other.id, kind: 'blocks' });
    await makeLink(sql, ws, { sourceId: other.id, targetId: t.id, kind: 'duplicates' });
    const at = Date.now() - 60_000;
    await makeComment(sql, ws, { ticketId: t.id, body: hostile, audience: 'client', authorId: clientUser.id, createdAt: new Date(at) });
    await makeComment(sql, ws, { ticketId: t.id, body: 'internal *only*', audience: 'internal', authorId: named.id, createdAt: new Date(at + 1) });
    await makeComment(sql, ws, { ticketId: t.id, body: 'plain', audience: 'client', authorId: null, createdAt: new Date(at + 2) });
    await addViewers(sql, t.id, [named.id, owner.id], named.id);
    for (const payload of [
      { field: 'title', old: 'a', new: 'b' },
      { field: 'priority', old: 'low', new: 'high' },
    ]) {
      await recordEvent(sql, { workspaceId: ws.id, ticketId: t.id, kind: 'field_changed', actorId: named.id, payload }, new Date());
    }
    const path = `/api/w/${ws.slug}/tickets/${t.id}`;
    // first as the factories wrote it (no stored HTML: the process renders it), then with the HTML
    // stored as the API's writers and the markdown:refresh task store it (sql/110)
    for (const [stored, person] of [false, true].flatMap((s) => [owner, named, clientUser].map((p) => [s, p] as const))) {
      if (stored && person === owner) expect(await refreshStoredHtml(sql, { ticketIds: [t.id] })).toBe(4);
      const { token } = await makeToken(sql, ws, person);
      const p = await principalOf(person);
      const ctx: Ctx = { sql, principal: p, now: () => new Date() };
      const res = await app.call('GET', path, { token });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const read = await runOp(readTicketPage, ctx, { ref: t.id });
      if (read.status !== 200) throw new Error('expected the page');
      expect(res.headers.get('etag')).toBe(read.etag);
      expect(res.body).toEqual(JSON.parse(JSON.stringify(read.page)));
      const page = res.body as { comments: { bodyHtml: string; audience: string }[]; descriptionHtml: string; viewers: { canRemove: boolean }[] };
      // the sanitiser ran over what went out
      for (const html of [page.descriptionHtml, ...page.comments.map((c) => c.bodyHtml)]) {
        expect(html).not.toMatch(/<script|href="javascript:|<img/);
      }
      expect(page.descriptionHtml).toContain('<strong>bold</strong>');
      expect(page.comments.map((c) => c.audience)).toEqual(person === clientUser ? ['client', 'client'] : ['client', 'internal', 'client']);
      expect(page.viewers.length).toBe(3);
      if (person === owner) expect(page.viewers.filter((v) => v.canRemove)).toHaveLength(2);
      if (person === clientUser) expect(res.body).not.toHaveProperty('billing');
      else expect(res.body).toHaveProperty('billing');
      // the summary from its typed row (sql/107) first; then PostgreSQL's spacing (`"key" : value`, which
      // JSON.stringify never writes) in the events and comments: not parsed and written again
      const raw = await fetch(`${app.base}${path}`, { headers: { authorization: `Bearer ${token}` } });
      const text = await raw.text();
      expect(text).toMatch(/^\{"id":"[0-9a-f-]{36}","humanId":"/);
      // the events from the text each keeps (sql/105): the actor's object and the payload's jsonb spacing (`"new": "b"`) show PostgreSQL wrote them
      expect(text).toMatch(
        /"events":\[\{"id":"[0-9a-f-]{36}","kind":"[a-z_]+","actor":\{"id" : "[0-9a-f-]{36}", "name" : "[^]*?"\},"subject":null,"payload":\{"new": "/,
      );
      // the comments as PostgreSQL wrote them with their stored HTML, or read and written again to render it
      expect(text).toMatch(
        stored
          ? /"comments":\[\{"id" : "[0-9a-f-]{36}", "body" : "[^]*?", "bodyHtml" : "<p>/
          : /"comments":\[\{"id":"[0-9a-f-]{36}","body":"[^]*?","bodyHtml":"<p>/,
      );
      // and the ETag still answers 304 without the page
      const again = await app.call('GET', path, { token, headers: { 'if-none-match': read.etag } });
      expect(again.status).toBe(304);
      expect(again.headers.get('etag')).toBe(read.etag);
    }
  });
});
