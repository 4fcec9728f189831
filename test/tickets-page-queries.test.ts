import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOp } from '../src/core/operation.ts';
import type { Principal } from '../src/core/auth/principal.ts';
import type { Ctx } from '../src/core/ctx.ts';
import { recordEvent } from '../src/core/tickets/events.ts';
import { getTicketPage } from '../src/core/tickets/get.ts';
import { listTickets } from '../src/core/tickets/list.ts';
import { readTicketPageJson } from '../src/core/tickets/read.ts';
import { connect, type Db } from '../src/db/connect.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  addLabels,
  addViewers,
  makeClient,
  makeComment,
  makeLink,
  makeProject,
  makeTicket,
  makeToken,
  makeUser,
  makeWorkspace,
  type Person,
  type Workspace,
} from './helpers/factories.ts';

let app: TestApp;
let ws: Workspace;
let owner: Person;
let member: Person;
let clientUser: Person;
let project: { id: string; key: string };
let counting: Db;
let statements: string[] = [];

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  owner = await makeUser(sql, ws, { role: 'owner' });
  member = await makeUser(sql, ws, { role: 'member' });
  const client = await makeClient(sql, ws);
  clientUser = await makeUser(sql, ws, { role: 'client', clientId: client.id });
  project = await makeProject(sql, ws, { billingClientId: client.id, members: [{ person: member }] });
  counting = connect(app.db.url, { max: 1, debug: (_conn, query) => statements.push(query) });
  // the first use of a connection also reads PostgreSQL's array types; keep that out of the counts
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

async function count<T>(fn: (ctx: Ctx) => Promise<T>, principal: Principal): Promise<{ n: number; result: T }> {
  // the connection closes after 30 s idle (a slow machine builds the busy ticket for longer), and
  // reconnecting reads the array types again: a statement of the connection's, not of the page
  await counting`select 1`;
  statements = [];
  const result = await fn({ sql: counting, principal, now: () => new Date() });
  return { n: statements.length, result };
}

/** A ticket with `n` of everything the page aggregates. */
async function busyTicket(n: number): Promise<{ id: string; humanId: string }> {
  const sql = app.db.sql;
  const t = await makeTicket(sql, ws, { projectId: project.id, reporterId: clientUser.id, estimateMinutes: 10 });
  await addLabels(sql, ws, t.id, ['frontend', 'backend', 'design'].slice(0, Math.min(n, 3)));
  for (let i = 0; i < n; i++) {
    const child = await makeTicket(sql, ws, { projectId: project.id, parentId: t.id, estimateMinutes: 5 });
    await makeTicket(sql, ws, { projectId: project.id, parentId: child.id, estimateMinutes: 1 });
    await makeComment(sql, ws, { ticketId: t.id, body: `comment ${i}`, audience: i % 2 ? 'internal' : 'client', authorId: member.id });
    await recordEvent(
      sql,
      { workspaceId: ws.id, ticketId: t.id, kind: 'field_changed', actorId: member.id, payload: { field: 'title', old: 'a', new: 'b' } },
      new Date(),
    );
    const other = await makeTicket(sql, ws, { projectId: project.id });
    const link = await makeLink(sql, ws, { sourceId: t.id, targetId: other.id, kind: (['blocks', 'relates', 'duplicates'] as const)[i % 3]! });
    await recordEvent(
      sql,
      { workspaceId: ws.id, ticketId: t.id, kind: 'link_added', actorId: member.id, payload: { linkId: link.id, otherId: other.id } },
      new Date(),
    );
    await sql`insert into attachments (workspace_id, ticket_id, filename, content_type, size, audience, data)
              values (${ws.id}, ${t.id}, ${`f${i}.txt`}, 'text/plain', 1, ${i % 2 ? 'internal' : 'client'}, '\\x41'::bytea)`;
    await sql`insert into codehost_links (workspace_id, ticket_id, repo, pr, url) values (${ws.id}, ${t.id}, 'acme/web', ${i + 1}, ${`https://github.com/acme/web/pull/${i + 1}`})`;
    const viewer = await makeUser(sql, ws, { role: 'member' });
    await addViewers(sql, t.id, [viewer.id], member.id);
  }
  return t;
}

describe('statement count of GET /tickets/{ref}', () => {
  it('is the same for an empty ticket and one with 30 comments, events, children, links, attachments, viewers', async () => {
    const empty = await busyTicket(0);
    const busy = await busyTicket(30);
    for (const person of [owner, member, clientUser]) {
      const p = await principalOf(person);
      const a = await count((ctx) => getTicketPage(ctx, empty.humanId), p);
      const b = await count((ctx) => getTicketPage(ctx, busy.humanId), p);
      expect(a.n).toBe(b.n);
      expect(a.n).toBeLessThanOrEqual(3);
      // the busy page really carries what was counted (a client user sees none of the children:
      // they neither reported nor watch them)
      expect(b.result.links.children).toHaveLength(person === clientUser ? 0 : 30);
      expect(b.result.viewers).toHaveLength(31);
      expect(b.result.events).toHaveLength(person === clientUser ? 30 : 60);
      expect(b.result.comments).toHaveLength(person === clientUser ? 15 : 30);
      expect(b.result.attachments).toHaveLength(person === clientUser ? 15 : 30);
      expect(b.result.codehost).toHaveLength(30);
      if (person !== clientUser) expect(b.result.billing!.rollupEstimateMinutes).toBe(30);
      // the REST door's text form: as many statements, the same page once parsed
      const c = await count((ctx) => runOp(readTicketPageJson, ctx, { ref: empty.humanId }), p);
      const d = await count((ctx) => runOp(readTicketPageJson, ctx, { ref: busy.humanId }), p);
      expect(d.n).toBe(c.n);
      expect(d.n).toBe(b.n);
      if (d.result.status !== 200) throw new Error('expected the page');
      expect(JSON.parse(d.result.page.jsonText.toString())).toEqual(JSON.parse(JSON.stringify(b.result)));
    }
  });
});

describe('statement count of GET /tickets', () => {
  it('is one statement per page, plus one when the filters name ids to check, whatever the page size', async () => {
    for (let i = 0; i < 12; i++) await makeTicket(app.db.sql, ws, { projectId: project.id });
    const p = await principalOf(member);
    const small = await count((ctx) => runOp(listTickets, ctx, { limit: '2' }), p);
    const large = await count((ctx) => runOp(listTickets, ctx, { limit: '50' }), p);
    expect(small.result.items).toHaveLength(2);
    expect(large.result.items.length).toBeGreaterThan(40);
    expect(small.n).toBe(1);
    expect(large.n).toBe(1);
    const next = await count((ctx) => runOp(listTickets, ctx, { limit: '2', cursor: small.result.nextCursor!, q: 'ticket' }), p);
    expect(next.n).toBe(1);
    const filtered = await count((ctx) => runOp(listTickets, ctx, { projectId: project.id, assigneeId: member.id }), p);
    expect(filtered.n).toBe(2);
  });
});
