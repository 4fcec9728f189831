import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../src/core/tickets/events.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

let app: TestApp;
let ws: Workspace;
let owner: Person;
let token: string;
let project: { id: string };

beforeAll(async () => {
  app = await startTestApp();
  ws = await makeWorkspace(app.db.sql);
  owner = await makeUser(app.db.sql, ws, { role: 'owner' });
  token = (await makeToken(app.db.sql, ws, owner)).token;
  project = await makeProject(app.db.sql, ws);
});
afterAll(() => app.close());

interface Item {
  id: string;
  updatedAt: string;
}

async function getPage(query: string): Promise<{ items: Item[]; nextCursor: string | null }> {
  const res = await app.call('GET', `/api/w/${ws.slug}/tickets?${query}`, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** Reads the whole list page by page; returns every item in order and the number of pages. */
async function readAll(query: string, limit: number): Promise<{ items: Item[]; pages: number }> {
  const items: Item[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page = await getPage(`${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
    items.push(...page.items);
    cursor = page.nextCursor;
    pages++;
    expect(pages).toBeLessThan(500);
  } while (cursor);
  return { items, pages };
}

describe('GET /tickets: keyset paging', () => {
  it('pages to completion: every ticket exactly once, in (updatedAt desc, id desc) order, ties and microseconds included', async () => {
    const sql = app.db.sql;
    const base = Date.parse('2031-01-01T00:00:00.000Z');
    const made: string[] = [];
    for (let i = 0; i < 40; i++) made.push((await makeTicket(sql, ws, { projectId: project.id, updatedAt: new Date(base - i * 1000) })).id);
    // eight tickets sharing one updatedAt exactly, and six a microsecond apart within one millisecond
    const tie = made.slice(10, 18);
    await sql`update tickets set updated_at = '2030-12-31T23:59:00.000000Z' where id = any(${tie}::uuid[])`;
    const micro = made.slice(20, 26);
    for (const [i, id] of micro.entries()) {
      await sql`update tickets set updated_at = ${`2030-12-31T23:58:00.00012${i}Z`}::timestamptz where id = ${id}`;
    }

    for (const limit of [1, 3, 7, 50]) {
      const { items, pages } = await readAll(`projectId=${project.id}`, limit);
      expect(items).toHaveLength(40);
      expect(new Set(items.map((t) => t.id)).size).toBe(40);
      // a full last page already knows it is the last (no empty trailing page)
      expect(pages).toBe(Math.ceil(40 / limit));
      const expected = await sql<{ id: string }[]>`
        select id from tickets where project_id = ${project.id} order by updated_at desc, id desc`;
      expect(items.map((t) => t.id)).toEqual(expected.map((r) => r.id));
    }
  });

  it('a cursor keeps working after the tickets it passed change (keyset, no offsets)', async () => {
    const sql = app.db.sql;
    const p = await makeProject(sql, ws);
    const base = Date.parse('2031-06-01T00:00:00.000Z');
    const made: string[] = [];
    for (let i = 0; i < 10; i++) made.push((await makeTicket(sql, ws, { projectId: p.id, updatedAt: new Date(base - i * 1000) })).id);
    const first = await getPage(`projectId=${p.id}&limit=4`);
    expect(first.items.map((t) => t.id)).toEqual(made.slice(0, 4));
    // the first page's tickets get newer; the rest of the list is unaffected
    await sql`update tickets set updated_at = updated_at + interval '1 day' where id = any(${made.slice(0, 4)}::uuid[])`;
    const second = await getPage(`projectId=${p.id}&limit=4&cursor=${first.nextCursor}`);
    expect(second.items.map((t) => t.id)).toEqual(made.slice(4, 8));
  });
});

describe('GET /tickets: change detection by polling (contract, Events)', () => {
  it('a poller paging by cursor while tickets are updated concurrently finds every change by updatedAt', async () => {
    const sql = app.db.sql;
    const p = await makeProject(sql, ws);
    const tickets: string[] = [];
    for (let i = 0; i < 30; i++) tickets.push((await makeTicket(sql, ws, { projectId: p.id, updatedAt: new Date(Date.now() - 60_000 + i) })).id);

    // What the poller knows: the latest updatedAt it processed per ticket, and its watermark.
    const seen = new Map<string, string>();
    let watermark = '';
    // updatedAt is stamped when a change starts; a slow transaction can commit after a later one,
    // so each round re-reads a small overlap below the watermark (dedupe makes that free).
    const OVERLAP_MS = 2000;
    let changesFound = 0;

    async function pollRound(): Promise<void> {
      const stopBelow = watermark ? new Date(Date.parse(watermark) - OVERLAP_MS).toISOString() : '';
      let cursor: string | null = null;
      let top = '';
      for (;;) {
        const page = await getPage(`projectId=${p.id}&limit=4${cursor ? `&cursor=${cursor}` : ''}`);
        let done = false;
        for (const item of page.items) {
          if (!top) top = item.updatedAt;
          if (item.updatedAt < stopBelow) {
            done = true;
            break;
          }
          if (seen.get(item.id) !== item.updatedAt) changesFound++;
          if (!seen.has(item.id) || seen.get(item.id)! < item.updatedAt) seen.set(item.id, item.updatedAt);
        }
        cursor = page.nextCursor;
        if (done || !cursor) break;
      }
      if (top > watermark) watermark = top;
    }

    await pollRound();
    expect(seen.size).toBe(30);

    // a writer changes random tickets while the poller keeps polling
    const changed = new Set<string>();
    let writing = true;
    const writer = (async () => {
      for (let i = 0; i < 60; i++) {
        const id = tickets[(i * 7) % tickets.length]!;
        await recordEvent(sql, { workspaceId: ws.id, ticketId: id, kind: 'field_changed', actorId: owner.id, payload: { field: 'title' } }, new Date());
        changed.add(id);
        await new Promise((r) => setTimeout(r, 3));
      }
      writing = false;
    })();
    let rounds = 0;
    const before = changesFound;
    while (writing) {
      await pollRound();
      rounds++;
    }
    await writer;
    await pollRound();

    expect(rounds).toBeGreaterThan(1);
    expect(changesFound).toBeGreaterThan(before);
    const actual = await sql<{ id: string; at: string }[]>`
      select id, to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at from tickets where project_id = ${p.id}`;
    expect(actual).toHaveLength(30);
    for (const row of actual) expect(seen.get(row.id), row.id).toBe(row.at);
    expect(changed.size).toBeGreaterThan(5);
  });
});
