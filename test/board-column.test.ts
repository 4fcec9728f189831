import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../src/core/tickets/events.ts';
import type { Db } from '../src/db/connect.ts';
import { boardWorld, type BoardWorld } from './board-world.ts';
import { makeProject, makeTicket, makeToken, makeWorkspace } from './helpers/factories.ts';

let w: BoardWorld;

beforeAll(async () => {
  w = await boardWorld(12);
});
afterAll(() => w.app.close());

interface Page {
  items: { id: string; priority: { position: number }; state: { key: string } }[];
  nextCursor: string | null;
}

const PRIORITIES = ['urgent', 'high', 'normal', 'low'];

async function column(stateId: string, query: string, token = w.ownerToken): Promise<Page> {
  const res = await w.app.call('GET', `/api/w/${w.ws.slug}/board/${stateId}?${query}`, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function boardColumn(stateKey: string, query: string) {
  const res = await w.app.call('GET', `/api/w/${w.ws.slug}/board?${query}`, { token: w.ownerToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.columns.find((c: { state: { key: string } }) => c.state.key === stateKey) as {
    total: number;
    tickets: { id: string }[];
    nextCursor: string | null;
  };
}

/** Walks a column: the board's first page, then GET /board/{stateId} with each nextCursor. */
async function walk(stateKey: string, query: string, limit: number, between?: () => Promise<void>) {
  const first = await boardColumn(stateKey, `${query}&limit=${limit}`);
  const ids = first.tickets.map((t) => t.id);
  let cursor = first.nextCursor;
  let pages = 1;
  while (cursor) {
    await between?.();
    const page = await column(w.wf.states[stateKey]!, `${query}&limit=${limit}&cursor=${cursor}`);
    ids.push(...page.items.map((t) => t.id));
    cursor = page.nextCursor;
    pages++;
    expect(pages).toBeLessThan(500);
  }
  return { ids, pages, total: first.total };
}

/** Tickets of project `projectId` in one state, as SQL orders the board. */
async function columnInSql(sql: Db, projectId: string, stateKey: string): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    select t.id from tickets t join workflow_states s on s.id = t.state_id join priorities p on p.id = t.priority_id
    where t.project_id = ${projectId} and s.key = ${stateKey} and not t.archived
    order by p.position, t.updated_at desc, t.id desc`;
  return rows.map((r) => r.id);
}

async function seedColumn(n: number, stateKey: string) {
  const sql = w.app.db.sql;
  const project = await makeProject(sql, w.ws);
  const made: string[] = [];
  const base = Date.parse('2030-01-01T00:00:00.000Z');
  for (let i = 0; i < n; i++) {
    const t = await makeTicket(sql, w.ws, {
      projectId: project.id,
      stateKey,
      priorityKey: PRIORITIES[i % 4],
      updatedAt: new Date(base + i * 1000),
      archived: i % 17 === 16,
    });
    made.push(t.id);
  }
  return { project, made };
}

describe('GET /board/{stateId}: paging a column', () => {
  it('pages to completion: every ticket once, in board order, ties and microseconds included, for any limit', async () => {
    const sql = w.app.db.sql;
    const { project, made } = await seedColumn(45, 'in_review');
    // eight tickets sharing one updatedAt exactly (same priority), six a microsecond apart
    const tie = made.filter((_, i) => i % 4 === 1).slice(0, 8);
    await sql`update tickets set updated_at = '2030-02-01T00:00:00.000000Z' where id = any(${tie}::uuid[])`;
    const micro = made.filter((_, i) => i % 4 === 2).slice(0, 6);
    for (const [i, id] of micro.entries()) await sql`update tickets set updated_at = ${`2030-02-01T00:00:00.00012${i}Z`}::timestamptz where id = ${id}`;
    const expected = await columnInSql(sql, project.id, 'in_review');
    expect(expected.length).toBe(43);

    for (const limit of [1, 3, 7, 50]) {
      const { ids, pages, total } = await walk('in_review', `projectId=${project.id}`, limit);
      expect(total).toBe(expected.length);
      expect(ids).toEqual(expected);
      expect(new Set(ids).size).toBe(ids.length);
      // a full last page already knows it is the last
      expect(pages).toBe(Math.ceil(expected.length / limit));
    }
  });

  it('without a cursor answers the first page of the column, as the board does', async () => {
    const { project } = await seedColumn(9, 'todo');
    const first = await column(w.wf.states.todo!, `projectId=${project.id}&limit=4`);
    const fromBoard = await boardColumn('todo', `projectId=${project.id}&limit=4`);
    expect(first.items.map((t) => t.id)).toEqual(fromBoard.tickets.map((t) => t.id));
    expect(first.items.every((t) => t.state.key === 'todo')).toBe(true);
    const rest = await column(w.wf.states.todo!, `projectId=${project.id}&limit=50&cursor=${first.nextCursor}`);
    expect([...first.items, ...rest.items].map((t) => t.id)).toEqual(await columnInSql(w.app.db.sql, project.id, 'todo'));
    expect(rest.nextCursor).toBeNull();
  });

  it('a state with no tickets (or none matching) is an empty page, not an error', async () => {
    const empty = await makeProject(w.app.db.sql, w.ws);
    expect(await column(w.wf.states.blocked!, `projectId=${empty.id}`)).toEqual({ items: [], nextCursor: null });
    expect(await column(w.wf.states.todo!, `projectId=${empty.id}&limit=1`)).toEqual({ items: [], nextCursor: null });
  });

  it('applies the board filters and visibility to later pages', async () => {
    const { project } = await seedColumn(20, 'in_progress');
    const urgent = await walk('in_progress', `projectId=${project.id}&priorityIds=${w.wf.priorities.urgent}`, 2);
    const all = await columnInSql(w.app.db.sql, project.id, 'in_progress');
    const [{ n }] = await w.app.db.sql<[{ n: number }]>`select count(*)::int as n from tickets t join priorities p on p.id = t.priority_id
      where t.project_id = ${project.id} and p.key = 'urgent' and not t.archived`;
    expect(n).toBeGreaterThan(2);
    expect(urgent.ids).toEqual(all.slice(0, n));
    const tok = (await makeToken(w.app.db.sql, w.ws, w.owner, { projectIds: [w.p1.id] })).token;
    const first = await boardColumn('in_progress', `projectId=${project.id}&limit=2`);
    const res = await w.app.call('GET', `/api/w/${w.ws.slug}/board/${w.wf.states.in_progress}?cursor=${first.nextCursor}`, { token: tok });
    expect(res.status).toBe(200);
    // the cursor positions the walk; what the page holds is what this token may see
    expect(res.body.items.length).toBeGreaterThan(0);
    for (const t of res.body.items) expect(t.project.id).toBe(w.p1.id);
  });
});

describe('GET /board/{stateId}: priority order follows the workflow', () => {
  it('a priority change moves the ticket; repositioning priorities reorders every column', async () => {
    const sql = w.app.db.sql;
    const project = await makeProject(sql, w.ws);
    const made: Record<string, string> = {};
    for (const [i, key] of PRIORITIES.entries()) {
      made[key] = (
        await makeTicket(sql, w.ws, { projectId: project.id, stateKey: 'in_review', priorityKey: key, updatedAt: new Date(Date.UTC(2030, 0, 1, 0, i)) })
      ).id;
    }
    const order = async () => (await column(w.wf.states.in_review!, `projectId=${project.id}`)).items.map((t) => t.id);
    expect(await order()).toEqual(PRIORITIES.map((k) => made[k]));
    await sql`update tickets set priority_id = ${w.wf.priorities.urgent!} where id = ${made.low!}`;
    expect(await order()).toEqual([made.low, made.urgent, made.high, made.normal]);
    await sql`update tickets set priority_id = ${w.wf.priorities.low!} where id = ${made.low!}`;
    const positions = await sql<{ id: string; position: number }[]>`select id, position from priorities where workspace_id = ${w.ws.id}`;
    try {
      // reversed: low is now the most urgent
      await sql`update priorities set position = 3 - position where workspace_id = ${w.ws.id}`;
      expect(await order()).toEqual([...PRIORITIES].reverse().map((k) => made[k]));
      const board = await w.app.call('GET', `/api/w/${w.ws.slug}/board?projectId=${project.id}`, { token: w.ownerToken });
      const col = board.body.columns.find((c: { state: { key: string } }) => c.state.key === 'in_review');
      expect(col.tickets.map((t: { id: string }) => t.id)).toEqual([...PRIORITIES].reverse().map((k) => made[k]));
      expect(col.tickets[0].priority).toMatchObject({ key: 'low', position: 0 });
    } finally {
      for (const p of positions) await sql`update priorities set position = ${p.position} where id = ${p.id}`;
    }
    expect(await order()).toEqual(PRIORITIES.map((k) => made[k]));
  });
});

describe('GET /board/{stateId}: stable while tickets change', () => {
  async function change(sql: Db, id: string, kind: 'bump' | 'priority' | 'away', now = new Date()) {
    await sql.begin(async (t) => {
      const tx = t as unknown as Db;
      if (kind === 'priority') {
        await tx`update tickets set priority_id = (select p.id from priorities p join tickets x on x.workspace_id = p.workspace_id
                   where x.id = ${id} and p.id <> x.priority_id order by random() limit 1) where id = ${id}`;
      }
      if (kind === 'away') {
        // out of the column and back: a state change each way
        await tx`update tickets set state_id = (select id from workflow_states where workspace_id = ${w.ws.id} and key = 'done') where id = ${id}`;
        await tx`update tickets set state_id = (select id from workflow_states where workspace_id = ${w.ws.id} and key = 'todo') where id = ${id}`;
      }
      await recordEvent(tx, { workspaceId: w.ws.id, ticketId: id, kind: 'field_changed', actorId: w.owner.id, payload: { field: 'priorityId' } }, now);
    });
  }

  it('a ticket seen on an earlier page and changed meanwhile is not returned again, even when its priority drops', async () => {
    const sql = w.app.db.sql;
    const { project } = await seedColumn(12, 'todo');
    const first = await boardColumn('todo', `projectId=${project.id}&limit=3`);
    const seen = first.tickets.map((t) => t.id);
    // the most urgent ticket becomes the least urgent and the newest: plain keyset paging would show it again
    await sql.begin(async (t) => {
      const tx = t as unknown as Db;
      await tx`update tickets set priority_id = (select id from priorities where workspace_id = ${w.ws.id} and key = 'low') where id = ${seen[0]!}`;
      await recordEvent(
        tx,
        { workspaceId: w.ws.id, ticketId: seen[0]!, kind: 'field_changed', actorId: w.owner.id, payload: { field: 'priorityId' } },
        new Date(),
      );
    });
    // a ticket not seen yet changes too: it is left out of this walk (the next board read shows it)
    const all = await columnInSql(sql, project.id, 'todo');
    const unseen = all.filter((id) => !seen.includes(id)).at(-1)!;
    await recordEvent(sql, { workspaceId: w.ws.id, ticketId: unseen, kind: 'field_changed', actorId: w.owner.id, payload: { field: 'title' } }, new Date());

    const ids = [...seen];
    let cursor = first.nextCursor;
    while (cursor) {
      const page = await column(w.wf.states.todo!, `projectId=${project.id}&limit=3&cursor=${cursor}`);
      ids.push(...page.items.map((t) => t.id));
      cursor = page.nextCursor;
    }
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((id) => id === seen[0])).toHaveLength(1);
    expect(ids).not.toContain(unseen);
    expect(ids.sort()).toEqual(all.filter((id) => id !== unseen).sort());
    // a fresh walk sees the column as it is now
    expect((await walk('todo', `projectId=${project.id}`, 3)).ids).toEqual(await columnInSql(sql, project.id, 'todo'));
  });

  it('walking while a writer bumps, re-prioritises and moves tickets: no duplicates, every unchanged ticket appears', async () => {
    const sql = w.app.db.sql;
    const { project } = await seedColumn(60, 'todo');
    const column0 = await columnInSql(sql, project.id, 'todo');
    const touched = new Set<string>();
    let writing = true;
    const kinds = ['bump', 'priority', 'away'] as const;
    const writer = (async () => {
      for (let i = 0; i < 45; i++) {
        const id = column0[(i * 7 + 3) % column0.length]!;
        touched.add(id);
        await change(sql, id, kinds[i % 3]!);
        await new Promise((r) => setTimeout(r, 2));
      }
      writing = false;
    })();
    const walked: string[][] = [];
    while (writing) walked.push((await walk('todo', `projectId=${project.id}`, 4, () => new Promise((r) => setTimeout(r, 1)))).ids);
    await writer;
    walked.push((await walk('todo', `projectId=${project.id}`, 4)).ids);

    expect(walked.length).toBeGreaterThan(1);
    expect(touched.size).toBeGreaterThan(10);
    const untouched = column0.filter((id) => !touched.has(id));
    expect(untouched.length).toBeGreaterThan(10);
    for (const ids of walked) {
      expect(new Set(ids).size).toBe(ids.length);
      for (const id of untouched) expect(ids).toContain(id);
    }
    // once the writer has stopped, a walk is the column exactly
    expect(walked.at(-1)).toEqual(await columnInSql(sql, project.id, 'todo'));
  });
});

describe('GET /board/{stateId}: errors', () => {
  const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

  it('400 invalid bad_uuid when stateId is not a UUID', async () => {
    for (const bad of ['todo', '123', 'xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx']) {
      const res = await w.app.call('GET', `/api/w/${w.ws.slug}/board/${bad}`, { token: w.ownerToken });
      expect(res.status, bad).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid', details: { reason: 'bad_uuid', field: 'stateId' } });
    }
  });

  it('404 not_found unknown_state for a state that is not in the workspace', async () => {
    const other = await makeWorkspace(w.app.db.sql);
    const [foreign] = await w.app.db.sql<{ id: string }[]>`select id from workflow_states where workspace_id = ${other.id} limit 1`;
    for (const id of ['11111111-2222-4333-8444-555555555555', foreign!.id]) {
      const res = await w.app.call('GET', `/api/w/${w.ws.slug}/board/${id}`, { token: w.ownerToken });
      expect(res.status, id).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'not_found', details: { reason: 'unknown_state', stateId: id } });
    }
  });

  it('400 bad_cursor for a malformed cursor, a GET /tickets cursor, or another column\u2019s cursor', async () => {
    const { project } = await seedColumn(8, 'in_progress');
    const fromList = await w.app.call('GET', `/api/w/${w.ws.slug}/tickets?projectId=${project.id}&limit=2`, { token: w.ownerToken });
    expect(fromList.body.nextCursor).toEqual(expect.any(String));
    const todoCursor = (await boardColumn('in_progress', `projectId=${project.id}&limit=2`)).nextCursor!;
    const state = w.wf.states.in_progress!;
    const id = '11111111-2222-4333-8444-555555555555';
    const at = '2030-03-10T20:00:00.000000';
    const cursors = [
      'nonsense!',
      'W10',
      enc({ x: 1 }),
      fromList.body.nextCursor as string,
      enc(['board', w.wf.states.done, '0', '0', at, id]),
      enc(['board', state, '0', '0', at]),
      enc(['board', state, 'x', '0', at, id]),
      enc(['board', state, '0', 'high', at, id]),
      enc(['board', state, '0', '-2147483648', at, id]),
      enc(['board', state, '0', '99999999999', at, id]),
      enc(['board', state, '0', '0', '2030-02-30T20:00:00.000000', id]),
      enc(['board', state, '0', '0', at, 'nope']),
      enc(['board', state, 0, '0', at, id]),
    ];
    for (const cursor of cursors) {
      const res = await w.app.call('GET', `/api/w/${w.ws.slug}/board/${state}?cursor=${cursor}`, { token: w.ownerToken });
      expect(res.status, cursor).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid', details: { reason: 'bad_cursor', field: 'cursor' } });
    }
    // the column's own cursor is fine; the same cursor on another column is refused
    expect((await w.app.call('GET', `/api/w/${w.ws.slug}/board/${state}?cursor=${todoCursor}`, { token: w.ownerToken })).status).toBe(200);
    const other = await w.app.call('GET', `/api/w/${w.ws.slug}/board/${w.wf.states.todo}?cursor=${todoCursor}`, { token: w.ownerToken });
    expect(other.status).toBe(400);
    expect(other.body.error.details.reason).toBe('bad_cursor');
    // and a board cursor is refused by GET /tickets
    const onList = await w.app.call('GET', `/api/w/${w.ws.slug}/tickets?cursor=${todoCursor}`, { token: w.ownerToken });
    expect(onList.status).toBe(400);
    expect(onList.body.error.details.reason).toBe('bad_cursor');
  });

  it('400 invalid for a bad limit, an over-long cursor or a bad filter value', async () => {
    const state = w.wf.states.todo!;
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=51', 'limit'],
      ['limit=x', 'limit'],
      [`cursor=${'a'.repeat(201)}`, 'cursor'],
      ['stateCategory=maybe', 'stateCategory'],
      ['projectId=nope', 'projectId'],
    ]) {
      const res = await w.app.call('GET', `/api/w/${w.ws.slug}/board/${state}?${query}`, { token: w.ownerToken });
      expect(res.status, query).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid', details: { reason: 'validation', field } });
    }
  });

  it('403 for queue=inbox without triage and without read scope; 401 without a credential', async () => {
    const state = w.wf.states.todo!;
    const tok = (await makeToken(w.app.db.sql, w.ws, w.owner, { scopes: ['read'] })).token;
    const r1 = await w.app.call('GET', `/api/w/${w.ws.slug}/board/${state}?queue=inbox`, { token: tok });
    expect(r1.status).toBe(403);
    expect(r1.body.error.details).toMatchObject({ reason: 'missing_scope', scope: 'triage' });
    const writeOnly = (await makeToken(w.app.db.sql, w.ws, w.owner, { scopes: ['write'] })).token;
    const r2 = await w.app.call('GET', `/api/w/${w.ws.slug}/board/${state}`, { token: writeOnly });
    expect(r2.status).toBe(403);
    expect(r2.body.error.details).toMatchObject({ reason: 'missing_scope', scope: 'read' });
    expect((await w.app.call('GET', `/api/w/${w.ws.slug}/board/${state}`)).status).toBe(401);
  });
});
