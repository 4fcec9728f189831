import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type CallResult, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makePeriod, makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

/**
 * A ticket deleted while another request adds something that points at it. The writer must hold
 * the ticket(s) in its transaction, so the loser answers 404 and never a 500 (a foreign-key
 * violation), and nothing is left pointing at a deleted ticket.
 */

const ROUNDS = 25;

let app: TestApp;
let ws: Workspace;
let projectId: string;
let owner: Person;
let viewer: Person;
let token: string;
let session: SessionCookie;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  owner = await makeUser(sql, ws, { role: 'owner' });
  viewer = await makeUser(sql, ws, { role: 'member' });
  projectId = (await makeProject(sql, ws)).id;
  token = (await makeToken(sql, ws, owner)).token;
  session = await login(app, owner.email, owner.password);
});
afterAll(() => app.close());

const path = (p: string) => `/api/w/${ws.slug}${p}`;
const ticket = () => makeTicket(app.db.sql, ws, { projectId });
const del = (ref: string) => app.call('DELETE', path(`/tickets/${ref}`), { session });

/** Rows of every table that points at a ticket, for tickets that no longer exist. */
async function orphans(ids: string[]): Promise<number> {
  const [row] = await app.db.sql<{ n: number }[]>`
    select (select count(*) from ticket_links where source_id = any(${ids}::uuid[]) or target_id = any(${ids}::uuid[]))::int
         + (select count(*) from codehost_links where ticket_id = any(${ids}::uuid[]))::int
         + (select count(*) from ticket_viewers where ticket_id = any(${ids}::uuid[]))::int
         + (select count(*) from attachments where ticket_id = any(${ids}::uuid[]))::int
         + (select count(*) from ticket_events where ticket_id = any(${ids}::uuid[]))::int
         + (select count(*) from tickets where parent_id = any(${ids}::uuid[]))::int as n`;
  return row!.n;
}

/**
 * Runs the write and the delete concurrently; the delete starts after a small varying delay so
 * that across the rounds it lands at every point of the writer's transaction.
 */
async function race(round: number, write: () => Promise<CallResult>, victim: string): Promise<[CallResult, CallResult]> {
  const deleting = new Promise<CallResult>((resolve, reject) => {
    setTimeout(() => del(victim).then(resolve, reject), round % 4);
  });
  return Promise.all([write(), deleting]);
}

function expectOutcome(writeRes: CallResult, deleteRes: CallResult, okStatus: number): void {
  expect(deleteRes.status, JSON.stringify(deleteRes.body)).toBe(200);
  expect([okStatus, 404], JSON.stringify(writeRes.body)).toContain(writeRes.status);
  if (writeRes.status === 404) expect(writeRes.body.error.code).toBe('not_found');
}

async function upload(ref: string, fields: Record<string, string> = {}): Promise<CallResult> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(Buffer.from('hello'))], { type: 'text/plain' }), 'notes.txt');
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const res = await fetch(`${app.base}${path(`/tickets/${ref}/attachments`)}`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
}

describe('a ticket deleted while a write adds to it', () => {
  it('POST /tickets/{ref}/links: deleting either end', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const [a, b] = [await ticket(), await ticket()];
      const victim = i % 2 === 0 ? a : b;
      const write = () => app.call('POST', path(`/tickets/${a.humanId}/links`), { token, body: { targetId: b.id, kind: 'relates' } });
      const [w, d] = await race(i, write, victim.id);
      expectOutcome(w, d, 201);
      expect(await orphans([victim.id])).toBe(0);
    }
  });

  it('PUT /tickets/{ref}/parent: deleting the child or the parent', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const [child, parent] = [await ticket(), await ticket()];
      const victim = i % 2 === 0 ? child : parent;
      const write = () => app.call('PUT', path(`/tickets/${child.humanId}/parent`), { token, body: { parentId: parent.id } });
      const [w, d] = await race(i, write, victim.id);
      expectOutcome(w, d, 200);
      expect(await orphans([victim.id])).toBe(0);
    }
  });

  it('POST /tickets with parentId: deleting the parent', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const parent = await ticket();
      const write = () => app.call('POST', path('/tickets'), { token, body: { projectId, title: `child ${i}`, parentId: parent.id } });
      const [w, d] = await race(i, write, parent.id);
      expectOutcome(w, d, 201);
      expect(await orphans([parent.id])).toBe(0);
      if (w.status === 201) {
        // The child exists either way; the delete made it top-level.
        const [row] = await app.db.sql<{ parentId: string | null }[]>`select parent_id as "parentId" from tickets where id = ${w.body.id}`;
        expect(row).toEqual({ parentId: null });
      }
    }
  });

  it('POST /tickets/{ref}/codehost', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const t = await ticket();
      const write = () =>
        app.call('POST', path(`/tickets/${t.humanId}/codehost`), {
          token,
          body: { repo: 'acme/web', url: `https://github.com/acme/web/pull/${i + 1}`, pr: i + 1 },
        });
      const [w, d] = await race(i, write, t.id);
      expectOutcome(w, d, 201);
      expect(await orphans([t.id])).toBe(0);
    }
  });

  it('POST /tickets/{ref}/viewers', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const t = await ticket();
      const write = () => app.call('POST', path(`/tickets/${t.humanId}/viewers`), { session, body: { identityIds: [viewer.id] } });
      const [w, d] = await race(i, write, t.id);
      expectOutcome(w, d, 200);
      expect(await orphans([t.id])).toBe(0);
    }
  });

  it('POST /tickets/{ref}/attachments', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const t = await ticket();
      const [w, d] = await race(i, () => upload(t.humanId), t.id);
      expectOutcome(w, d, 201);
      expect(await orphans([t.id])).toBe(0);
    }
  });

  it('POST /time', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const [{ n }] = await app.db.sql<[{ n: number }]>`select count(*)::int as n from periods where workspace_id = ${ws.id}`;
    if (n === 0) await makePeriod(app.db.sql, ws, { start: `${today.slice(0, 8)}01`, end: '2099-12-31' });
    for (let i = 0; i < ROUNDS; i++) {
      const t = await ticket();
      const write = () => app.call('POST', path('/time'), { token, body: { ticketId: t.id, spentOn: today, minutes: 30 } });
      const [w, d] = await race(i, write, t.id);
      expectOutcome(w, d, 201);
      const [left] = await app.db.sql<{ n: number }[]>`select count(*)::int as n from time_entries where ticket_id = ${t.id}`;
      expect(left!.n).toBe(0);
    }
  });

  it('POST /tickets/{ref}/attachments with commentId while that comment is deleted', async () => {
    const t = await ticket();
    for (let i = 0; i < ROUNDS; i++) {
      const c = await app.call('POST', path(`/tickets/${t.humanId}/comments`), { token, body: { body: `comment ${i}` } });
      expect(c.status).toBe(201);
      const deleting = new Promise<CallResult>((resolve, reject) => {
        setTimeout(() => app.call('DELETE', path(`/tickets/${t.humanId}/comments/${c.body.id}`), { token }).then(resolve, reject), i % 4);
      });
      const [w, d] = await Promise.all([upload(t.humanId, { commentId: c.body.id }), deleting]);
      expectOutcome(w, d, 201);
      const [left] = await app.db.sql<{ n: number }[]>`select count(*)::int as n from attachments where comment_id = ${c.body.id}`;
      expect(left!.n).toBe(0);
    }
  });
});
