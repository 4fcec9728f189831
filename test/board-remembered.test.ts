import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedPlanPool, connect, type Db } from '../src/db/connect.ts';
import type { Caches } from '../src/core/cache.ts';
import type { Ctx } from '../src/core/ctx.ts';
import { ReadAnswers } from '../src/core/reads/answers.ts';
import { getBoardJson } from '../src/core/board/board.ts';
import { getMyWorkJson } from '../src/core/board/my.ts';
import { listTickets, listTicketsJson } from '../src/core/tickets/list.ts';
import { runOp } from '../src/core/operation.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { addLabels, makeClient, makeComment, makeUser, type Person } from './helpers/factories.ts';
import { boardWorld, NOW, type BoardWorld } from './board-world.ts';

/**
 * GET /board, GET /my and GET /tickets are answered from a web process's memory while nothing they show has
 * changed (src/core/reads/remembered.ts, sql/098_read_marks.sql). Two web servers over one
 * database stand for two web processes: each keeps its own answers, and after any change,
 * whatever table it touches, the very next request to either one gets the answer a fresh read gives.
 */

type Json = Record<string, unknown>;
interface Summary {
  id: string;
  humanId: string;
}
interface BoardBody {
  columns: { state: { id: string }; total: number; tickets: Summary[]; nextCursor: string | null }[];
}

let w: BoardWorld;
let other: TestApp;
let sql: Db;
let clock = NOW;
let elevated: Person;
const tokens: Record<string, string> = {};
const who: Record<string, Person> = {};

beforeAll(async () => {
  w = await boardWorld();
  sql = w.app.db.sql;
  // this server's clock moves when a test moves it (GET /my's dueSoon follows the day); boardWorld's stays at NOW
  other = await startTestApp({ db: w.app.db, now: () => clock });
  const partner = await makeClient(sql, w.ws);
  elevated = await makeUser(sql, w.ws, { role: 'client_elevated', clientId: partner.id });
  Object.assign(who, { owner: w.owner, member: w.member, client: w.clientUser, elevated });
  for (const [name, person] of Object.entries(who)) tokens[name] = await w.token(person);
});

afterAll(async () => {
  await other?.close();
  await w?.app.close();
});

const BOARD = '/board';
const BOARD_PAGED = '/board?limit=1';
const MY = '/my';
const LIST = '/tickets';
const LIST_PAGED = '/tickets?limit=2';
const LIST_FILTERED = `/tickets?stateCategory=open`;

async function read(app: TestApp, caller: string, path: string): Promise<Json> {
  const res = await app.call('GET', `/api/w/${w.ws.slug}${path}`, { token: tokens[caller] });
  expect(res.status).toBe(200);
  return res.body as Json;
}

/** The answer as a fresh read gives it: the same operation without process caches. */
async function fresh(caller: string, path: string): Promise<Json> {
  const principal = await w.app.verifier.verify(tokens[caller]!, w.ws.slug, new Date());
  const ctx = { sql, principal, now: () => clock };
  const text =
    path === MY
      ? (await runOp(getMyWorkJson, ctx, {})).jsonText
      : path.startsWith(LIST)
        ? (await runOp(listTicketsJson, ctx, Object.fromEntries(new URL(path, 'http://x').searchParams))).jsonText
        : (await runOp(getBoardJson, ctx, path === BOARD_PAGED ? { limit: 1 } : {})).jsonText;
  return JSON.parse(text.toString()) as Json;
}

/** Both servers have answered `path` (twice: the second answer comes from memory). */
async function warm(caller: string, path: string): Promise<Json> {
  for (const app of [w.app, other, w.app, other]) await read(app, caller, path);
  return read(other, caller, path);
}

const shownTo = async (caller: string): Promise<Summary[]> => ((await fresh(caller, BOARD)) as unknown as BoardBody).columns.flatMap((c) => c.tickets);

describe('GET /board, /my and /tickets from memory', () => {
  it.each([BOARD, LIST])('an unchanged answer comes from memory: a change that bypasses the triggers is not seen (the test of the test): %s', async (path) => {
    const before = await warm('owner', path);
    const [first] = await shownTo('owner');
    const [{ title }] = await sql<[{ title: string }]>`select title from tickets where id = ${first!.id}`;
    await sql.begin(async (t) => {
      await t`set local session_replication_role = replica`;
      await t`update tickets set title = 'Changed behind the triggers' where id = ${first!.id}`;
      await t`select compute_ticket_summaries(array[${first!.id}]::uuid[])`; // the stored summary (sql/108), its triggers off too
    });
    try {
      expect(await fresh('owner', path)).not.toEqual(before);
      expect(await read(other, 'owner', path)).toEqual(before);
      expect(await read(w.app, 'owner', path)).toEqual(before);
    } finally {
      await sql.begin(async (t) => {
        await t`set local session_replication_role = replica`;
        await t`update tickets set title = ${title} where id = ${first!.id}`;
        await t`select compute_ticket_summaries(array[${first!.id}]::uuid[])`;
      });
    }
  });

  /**
   * Runs `fn` with the owner's context over a connection of its own, which records every statement
   * it sends (the connection's own first ones left out), and with a process memory of its own.
   */
  async function withCountingCtx(fn: (ctx: Ctx, statements: string[]) => Promise<void>): Promise<void> {
    const statements: string[] = [];
    const counting: Db = connect(w.app.db.url, { max: 1, debug: (_c, query) => statements.push(query) });
    try {
      const principal = await w.app.verifier.verify(tokens.owner!, w.ws.slug, new Date());
      await counting`select 1`;
      await cachedPlanPool(counting)!`select 1`; // the sibling pool's first connection reads the types (the board runs there: db/connect.ts onCachedPlan)
      statements.length = 0;
      await fn({ sql: counting, principal, now: () => clock, caches: { readAnswers: new ReadAnswers() } as unknown as Caches }, statements);
    } finally {
      await counting.end();
    }
  }

  it.each([
    ['GET /tickets', (ctx: Ctx) => runOp(listTicketsJson, ctx, { limit: 3 })],
    // the MCP door's search_tickets runs the object form: the same remembered page, read
    ['the list as objects (search_tickets)', (ctx: Ctx) => runOp(listTickets, ctx, { limit: 3 })],
    ['GET /board', (ctx: Ctx) => runOp(getBoardJson, ctx, {})],
  ] as const)('%s: a first read is one statement (the mark in it), an unchanged one only the mark', async (_name, read) =>
    withCountingCtx(async (ctx, statements) => {
      const first = await read(ctx);
      expect(statements).toHaveLength(1);
      expect(statements[0]).toMatch(/read_marks/);
      statements.length = 0;
      expect(await read(ctx)).toEqual(first);
      expect(statements).toHaveLength(1);
      expect(statements[0]).not.toMatch(/ts_sum/); // the mark alone: no summary read
    }),
  );

  it.each([
    ['GET /tickets', (ctx: Ctx) => runOp(listTicketsJson, ctx, { limit: 3 })],
    ['GET /board', (ctx: Ctx) => runOp(getBoardJson, ctx, {})],
  ] as const)(
    '%s: while the mark keeps moving a read sends its own statement alone (no look-up first); once it stops, reads come from memory again',
    async (_name, read) =>
      withCountingCtx(async (ctx, statements) => {
        const move = () => sql`insert into read_marks (workspace_id, n) values (${w.ws.id}, nextval('read_mark_seq'))
                             on conflict (workspace_id) do update set n = excluded.n`;
        const body = JSON.parse((await read(ctx)).jsonText.toString()) as { items?: Summary[]; columns?: { tickets: Summary[] }[] };
        const shown = (body.items ?? body.columns!.flatMap((c) => c.tickets))[0]!;
        // the mark moved: the look-up finds the answer stale, then the answer's statement
        await move();
        statements.length = 0;
        await read(ctx);
        expect(statements).toHaveLength(2);
        const [lookUp, own] = statements as [string, string];
        // moved again: the answer's statement alone, and what it reads is current
        await move();
        await sql`update tickets set title = 'Seen while moving' where id = ${shown.id}`;
        statements.length = 0;
        const seen = await read(ctx);
        expect(statements).toEqual([own]);
        expect(seen.jsonText.toString()).toContain('Seen while moving');
        // the mark stood still since: read once more, then from memory (the look-up alone)
        statements.length = 0;
        await read(ctx);
        expect(statements).toEqual([own]);
        statements.length = 0;
        expect(await read(ctx)).toEqual(seen);
        expect(statements).toEqual([lookUp]);
      }),
  );

  it('GET /tickets after a cursor is read afresh each time (only first pages are remembered)', () =>
    withCountingCtx(async (ctx, statements) => {
      const { nextCursor } = JSON.parse((await runOp(listTicketsJson, ctx, { limit: 2 })).jsonText.toString()) as { nextCursor: string };
      expect(nextCursor).toBeTruthy();
      for (let i = 0; i < 2; i++) {
        statements.length = 0;
        await runOp(listTicketsJson, ctx, { limit: 2, cursor: nextCursor });
        expect(statements).toHaveLength(1);
        expect(statements[0]).toMatch(/ts_sum\.head/);
        expect(statements[0]).not.toMatch(/read_marks/);
      }
    }));

  // Each change touches one table a board or "my work" reads, in a way that changes the answer of
  // `caller` at `path`; both servers held that answer just before.
  const changes: { name: string; caller: string; path: string; change: () => Promise<unknown>; clock?: true }[] = [
    {
      name: 'a ticket edit (tickets)',
      caller: 'owner',
      path: BOARD,
      change: async () => sql`update tickets set title = 'Edited' where id = ${(await shownTo('owner'))[0]!.id}`,
    },
    {
      name: 'a state move (tickets, board_counts)',
      caller: 'owner',
      path: BOARD,
      change: async () => sql`update tickets set state_id = ${w.wf.states.done!} where id = ${(await shownTo('owner'))[0]!.id}`,
    },
    {
      name: 'an archived ticket (tickets)',
      caller: 'member',
      path: MY,
      change: async () => {
        const my = (await fresh('member', MY)) as unknown as { assigned: Summary[] };
        return sql`update tickets set archived = true where id = ${my.assigned[0]!.id}`;
      },
    },
    {
      name: 'a deleted ticket (tickets)',
      caller: 'client',
      path: BOARD,
      change: async () => sql`delete from tickets where id = ${(await shownTo('client'))[0]!.id}`,
    },
    {
      name: 'a counter (board_counts)',
      caller: 'owner',
      path: BOARD,
      change: () => sql`update board_counts set n = n + 1 where workspace_id = ${w.ws.id} and state_id = ${w.wf.states.todo!}`,
    },
    {
      name: 'a change-feed entry only (ticket_changes: the cursors carry its mark)',
      caller: 'owner',
      path: BOARD_PAGED,
      change: async () => {
        const [t] = await shownTo('owner');
        return sql`insert into ticket_changes (workspace_id, ticket_id, human_id, kind) values (${w.ws.id}, ${t!.id}, ${t!.humanId}, 'time_logged')`;
      },
    },
    {
      name: 'a renamed state (workflow_states)',
      caller: 'owner',
      path: BOARD,
      change: () => sql`update workflow_states set name = 'Renamed state' where id = ${w.wf.states.todo!}`,
    },
    {
      name: 'a renamed kind (ticket_kinds)',
      caller: 'owner',
      path: BOARD,
      change: () => sql`update ticket_kinds set name = 'Renamed kind' where workspace_id = ${w.ws.id} and key = 'bug'`,
    },
    {
      name: 'repositioned priorities (priorities, and the copies on tickets)',
      caller: 'owner',
      path: BOARD,
      change: () => sql`update priorities set position = 10 - position where workspace_id = ${w.ws.id}`,
    },
    {
      name: 'a renamed label (labels)',
      caller: 'owner',
      path: BOARD,
      change: () => sql`update labels set name = 'Renamed label' where workspace_id = ${w.ws.id} and name = 'frontend'`,
    },
    {
      name: 'a label put on a ticket (ticket_labels)',
      caller: 'owner',
      path: BOARD,
      change: async () => addLabels(sql, w.ws, (await shownTo('owner'))[1]!.id, ['design']),
    },
    {
      name: 'a renamed project (projects)',
      caller: 'owner',
      path: BOARD,
      change: () => sql`update projects set key = 'RENAMED', name = 'Renamed' where id = ${w.p1.id}`,
    },
    {
      name: 'a new project membership (project_memberships: visibility)',
      caller: 'member',
      path: BOARD,
      change: () =>
        sql`insert into project_memberships (workspace_id, project_id, identity_id, access) values (${w.ws.id}, ${w.p2.id}, ${w.member.id}, 'full')`,
    },
    {
      name: 'a collaborating client (project_collaborators: visibility)',
      caller: 'elevated',
      path: BOARD,
      change: async () => {
        const [m] = await sql<[{ client_id: string }]>`select client_id from memberships where identity_id = ${elevated.id}`;
        return sql`insert into project_collaborators (project_id, client_id) values (${w.p1.id}, ${m.client_id})`;
      },
    },
    {
      name: 'a viewer added (ticket_viewers: visibility)',
      caller: 'client',
      path: BOARD,
      change: async () => {
        const mine = new Set((await shownTo('client')).map((t) => t.id));
        const next = (await shownTo('owner')).find((t) => !mine.has(t.id))!;
        return sql`insert into ticket_viewers (ticket_id, identity_id) values (${next.id}, ${w.clientUser.id})`;
      },
    },
    {
      name: 'a renamed person (identities)',
      caller: 'owner',
      path: BOARD,
      change: () => sql`update identities set name = 'Renamed Person' where id = ${w.owner.id}`,
    },
    {
      name: 'a workspace name for a person (contact_names)',
      caller: 'owner',
      path: BOARD,
      change: () => sql`insert into contact_names (workspace_id, identity_id, name) values (${w.ws.id}, ${w.owner.id}, 'Known here as')`,
    },
    {
      name: 'a renamed client (clients)',
      caller: 'owner',
      path: BOARD,
      change: () => sql`update clients set name = 'Renamed client' where id = ${w.clientA.id}`,
    },
    {
      name: "a client's comment (comments: client users count only those)",
      caller: 'client',
      path: BOARD,
      change: async () => makeComment(sql, w.ws, { ticketId: (await shownTo('client'))[0]!.id, body: 'for the client', audience: 'client' }),
    },
    {
      name: 'an internal comment made visible to clients (comments: audience)',
      caller: 'client',
      path: BOARD,
      change: async () => {
        const ticketId = (await shownTo('client'))[1]!.id;
        const c = await makeComment(sql, w.ws, { ticketId, body: 'internal', audience: 'internal' });
        await warm('client', BOARD);
        return sql`update comments set audience = 'client' where id = ${c.id}`;
      },
    },
    {
      name: 'a ticket edit, on the list (tickets)',
      caller: 'owner',
      path: LIST,
      change: async () => sql`update tickets set title = 'Edited for the list' where id = ${(await shownTo('owner'))[0]!.id}`,
    },
    {
      name: 'a ticket brought to the top of a short page (tickets: the order)',
      caller: 'member',
      path: LIST_PAGED,
      change: async () => {
        const page = (await fresh('member', LIST)) as unknown as { items: Summary[] };
        return sql`update tickets set updated_at = updated_at + interval '1 day' where id = ${page.items.at(-1)!.id}`;
      },
    },
    {
      name: 'a ticket closed, on the open list (tickets, filtered)',
      caller: 'owner',
      path: LIST_FILTERED,
      change: async () => {
        const page = (await fresh('owner', LIST_FILTERED)) as unknown as { items: Summary[] };
        return sql`update tickets set state_id = ${w.wf.states.done!} where id = ${page.items[0]!.id}`;
      },
    },
    {
      name: 'a viewer added, on the list (ticket_viewers: visibility)',
      caller: 'client',
      path: LIST,
      change: async () => {
        const mine = new Set(((await fresh('client', LIST)) as unknown as { items: Summary[] }).items.map((t) => t.id));
        const next = ((await fresh('owner', LIST)) as unknown as { items: Summary[] }).items.find((t) => !mine.has(t.id))!;
        return sql`insert into ticket_viewers (ticket_id, identity_id) values (${next.id}, ${w.clientUser.id})`;
      },
    },
    {
      name: 'a renamed person, on the list (identities)',
      caller: 'owner',
      path: LIST,
      change: () => sql`update identities set name = 'Renamed for the list' where id = ${w.member.id}`,
    },
    {
      name: "the caller's timezone (memberships: dueSoon's today)",
      caller: 'owner',
      path: MY,
      change: () => sql`update memberships set timezone = 'Pacific/Kiritimati' where identity_id = ${w.owner.id} and workspace_id = ${w.ws.id}`,
    },
    {
      name: 'the next day, nothing else changed (dueSoon follows the clock)',
      caller: 'member',
      path: MY,
      change: async () => {
        clock = new Date(clock.getTime() + 86_400_000);
      },
      clock: true,
    },
  ];

  for (const c of changes) {
    it(`sees ${c.name} at once, on both servers`, async () => {
      const before = await warm(c.caller, c.path);
      await c.change();
      const after = await read(other, c.caller, c.path);
      expect(after).toEqual(await fresh(c.caller, c.path));
      expect(after).not.toEqual(before);
      // (boardWorld's server keeps its clock at NOW)
      if (!c.clock) expect(await read(w.app, c.caller, c.path)).toEqual(after);
    });
  }
});
