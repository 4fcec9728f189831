import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/db/connect.ts';
import { recordEvent } from '../src/core/tickets/events.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

let app: TestApp;
let ws: Workspace;
let member: Person;
let token: string;
let mine: { id: string };
let other: { id: string };

beforeAll(async () => {
  app = await startTestApp();
  ws = await makeWorkspace(app.db.sql);
  member = await makeUser(app.db.sql, ws, { role: 'member' });
  token = (await makeToken(app.db.sql, ws, member)).token;
  mine = await makeProject(app.db.sql, ws, { members: [{ person: member }] });
  other = await makeProject(app.db.sql, ws);
});
afterAll(() => app.close());

const poll = async (after: number, limit = 500) => {
  const res = await app.call('GET', `/api/w/${ws.slug}/changes?after=${after}&limit=${limit}`, { token });
  expect(res.status).toBe(200);
  return res;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A change committed the way the core commits it: an event in a transaction, held open for `holdMs`. */
async function change(sql: Db, ticketId: string, holdMs: number, extra?: (t: Db) => Promise<void>) {
  await sql.begin(async (t) => {
    const db = t as unknown as Db;
    await extra?.(db);
    await recordEvent(
      db,
      { workspaceId: ws.id, ticketId, kind: 'field_changed', actorId: member.id, payload: { field: 'title', old: 'a', new: 'b' } },
      new Date(),
    );
    if (holdMs) await db`select pg_sleep(${holdMs / 1000})`;
  });
}

describe('GET /changes', () => {
  it('answers the envelope for bad parameters and an empty feed with the poll interval', async () => {
    const ws2 = await makeWorkspace(app.db.sql);
    const p = await makeUser(app.db.sql, ws2);
    const t = (await makeToken(app.db.sql, ws2, p)).token;
    const empty = await app.call('GET', `/api/w/${ws2.slug}/changes`, { token: t });
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ changes: [], nextAfter: 0, pollAfterSeconds: 5 });
    expect(empty.headers.get('x-poll-interval')).toBe('5');
    for (const q of ['after=-1', 'after=abc', 'limit=0', 'limit=501', 'after=1.5']) {
      const res = await app.call('GET', `/api/w/${ws2.slug}/changes?${q}`, { token: t });
      expect(res.status, q).toBe(400);
      expect(res.body.error.code).toBe('invalid');
    }
    const noRead = (await makeToken(app.db.sql, ws2, p, { scopes: ['write'] })).token;
    expect((await app.call('GET', `/api/w/${ws2.slug}/changes`, { token: noRead })).status).toBe(403);
  });

  it('a poller racing concurrent writers (some holding their transactions open) sees every committed change once, in order, and a gone for every ticket that left its sight', async () => {
    const sql = app.db.sql;
    const visible = await Promise.all(Array.from({ length: 8 }, () => makeTicket(sql, ws, { projectId: mine.id })));
    const hidden = await makeTicket(sql, ws, { projectId: other.id });
    const movedOut = await makeTicket(sql, ws, { projectId: mine.id });
    const archived = await makeTicket(sql, ws, { projectId: mine.id });
    const deleted = await makeTicket(sql, ws, { projectId: mine.id });
    const watched = await makeTicket(sql, ws, { projectId: other.id });
    await sql`insert into ticket_viewers (ticket_id, identity_id) values (${watched.id}, ${member.id})`;

    const start = (await poll(0)).body.nextAfter as number;
    const seen: { seq: number; ticketId: string; kind: string }[] = [];
    let after = start;
    let writing = true;
    const poller = (async () => {
      while (writing) {
        const page = (await poll(after, 7)).body;
        seen.push(...page.changes);
        after = page.nextAfter;
        await sleep(5);
      }
    })();

    // Four writers, 15 changes each, every third transaction held open 50-150 ms so later ones commit first.
    const writers = Array.from({ length: 4 }, (_, w) =>
      (async () => {
        for (let i = 0; i < 15; i++) {
          const target = i % 5 === 4 ? hidden : visible[(w * 15 + i) % visible.length]!;
          await change(sql, target.id, i % 3 === 0 ? 50 + ((w * 37 + i * 11) % 100) : 0);
        }
      })(),
    );
    // Tickets leaving sight, concurrently with the writers.
    const leaving = (async () => {
      await change(sql, movedOut.id, 80);
      await sql.begin(async (t) => {
        const db = t as unknown as Db;
        await db`update tickets set project_id = ${other.id} where id = ${movedOut.id}`;
        await recordEvent(
          db,
          { workspaceId: ws.id, ticketId: movedOut.id, kind: 'moved', actorId: member.id, payload: { fromProjectId: mine.id, toProjectId: other.id } },
          new Date(),
        );
      });
      await sql.begin(async (t) => {
        const db = t as unknown as Db;
        await db`update tickets set archived = true where id = ${archived.id}`;
        await recordEvent(db, { workspaceId: ws.id, ticketId: archived.id, kind: 'archived', actorId: member.id }, new Date());
      });
      await sql`delete from tickets where id = ${deleted.id}`;
      await sql.begin(async (t) => {
        const db = t as unknown as Db;
        await db`delete from ticket_viewers where ticket_id = ${watched.id} and identity_id = ${member.id}`;
        await recordEvent(
          db,
          { workspaceId: ws.id, ticketId: watched.id, kind: 'viewer_removed', actorId: member.id, payload: { identityId: member.id } },
          new Date(),
        );
      });
    })();
    await Promise.all([...writers, leaving]);
    writing = false;
    await poller;
    for (let page = (await poll(after, 7)).body; ; page = (await poll(after, 7)).body) {
      seen.push(...page.changes);
      after = page.nextAfter;
      if (page.changes.length < 7) break;
    }

    // In order, each once.
    const seqs = seen.map((c) => c.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);

    // Every committed change to a visible ticket was seen: 48 writer changes on visible tickets (12 went to the hidden one).
    const onVisible = seen.filter((c) => visible.some((v) => v.id === c.ticketId));
    expect(onVisible).toHaveLength(48);
    const committed =
      await sql`select seq from ticket_changes where workspace_id = ${ws.id} and seq > ${start} and ticket_id = any(${visible.map((v) => v.id)}::uuid[]) order by seq`;
    expect(onVisible.map((c) => c.seq)).toEqual(committed.map((r) => Number(r.seq)));

    // Never a change of a ticket the caller never saw.
    expect(seen.some((c) => c.ticketId === hidden.id)).toBe(false);

    // A gone (deleted, for the deleted one) for each ticket that left sight, and nothing of them after it.
    for (const t of [movedOut, archived, deleted, watched]) {
      const mineSeen = seen.filter((c) => c.ticketId === t.id);
      const last = t === deleted ? 'deleted' : 'gone';
      expect(mineSeen.at(-1)?.kind, t.humanId).toBe(last);
      expect(mineSeen.filter((c) => c.kind === 'gone' || c.kind === 'deleted')).toHaveLength(1);
    }
    // Whatever the poller read of the moved ticket before it left, its last word is gone.
    expect(seen.filter((c) => c.ticketId === movedOut.id).every((c, i, all) => (i === all.length - 1 ? c.kind === 'gone' : c.kind === 'field_changed'))).toBe(
      true,
    );
  }, 60_000);

  it('pages at the limit with pollAfterSeconds 0 and skips past changes the caller cannot see', async () => {
    const sql = app.db.sql;
    const t = await makeTicket(sql, ws, { projectId: mine.id });
    const h = await makeTicket(sql, ws, { projectId: other.id });
    const from = (await poll(0)).body.nextAfter as number;
    for (let i = 0; i < 3; i++) await change(sql, t.id, 0);
    for (let i = 0; i < 3; i++) await change(sql, h.id, 0);
    const first = await poll(from, 2);
    expect(first.body.changes).toHaveLength(2);
    expect(first.body.pollAfterSeconds).toBe(0);
    expect(first.headers.get('x-poll-interval')).toBe('0');
    const second = (await poll(first.body.nextAfter, 2)).body;
    expect(second.changes.map((c: any) => c.ticketId)).toEqual([t.id]);
    const [{ m }] = await sql<[{ m: string }]>`select max(seq) as m from ticket_changes where workspace_id = ${ws.id}`;
    expect(second.nextAfter).toBe(Number(m));
    expect(second.changes[0]).toEqual({
      seq: expect.any(Number),
      ticketId: t.id,
      humanId: t.humanId,
      kind: 'field_changed',
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
  });
});
