import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type CallResult, type TestApp } from './helpers/app.ts';
import { mcpSession } from './helpers/mcp.ts';
import { makePeriod, makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

// Idempotency-Key on token POSTs (issue 9, part 2): a retry after a timeout must not write twice.

let app: TestApp;
let ws: Workspace;
let owner: Person;
let project: { id: string; key: string };
let ticket: { id: string; humanId: string };
let token: string;
const today = new Date().toISOString().slice(0, 10);

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  owner = await makeUser(sql, ws, { role: 'owner' });
  project = await makeProject(sql, ws, { members: [{ person: owner }] });
  ticket = await makeTicket(sql, ws, { projectId: project.id });
  await makePeriod(sql, ws, { start: '2000-01-01', end: '2099-12-31' });
  token = (await makeToken(sql, ws, owner)).token;
});
afterAll(() => app.close());

let seq = 0;
const newKey = () => `key-${process.pid}-${++seq}-${Math.random().toString(36).slice(2)}`;
const tickets = `/api/w/${'{slug}'}/tickets`;
const path = (p: string) => p.replace('{slug}', ws.slug);

const post = (p: string, body: unknown, key: string | null, t = token) =>
  app.call('POST', path(p), { token: t, body, headers: key === null ? {} : { 'idempotency-key': key } });

const count = async (table: 'tickets' | 'time_entries', where: { title?: string; note?: string }) => {
  const sql = app.db.sql;
  const [{ n }] =
    table === 'tickets'
      ? await sql<[{ n: number }]>`select count(*)::int as n from tickets where workspace_id = ${ws.id} and title = ${where.title!}`
      : await sql<[{ n: number }]>`select count(*)::int as n from time_entries where workspace_id = ${ws.id} and note = ${where.note!}`;
  return n;
};

const replayed = (res: CallResult) => res.headers.get('idempotent-replayed');

describe('replays', () => {
  it('POST /tickets retried with the same key and body creates one ticket and answers the stored response again', async () => {
    const key = newKey();
    const body = { projectId: project.id, title: `Retried ${key}` };
    const first = await post(tickets, body, key);
    expect(first.status).toBe(201);
    expect(replayed(first)).toBeNull();
    const again = await post(tickets, body, key);
    expect(again.status).toBe(201);
    expect(replayed(again)).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('content-type')).toMatch(/application\/json/);
    expect(await count('tickets', { title: body.title })).toBe(1);
  });

  it('POST /time retried with the same key and body logs one entry', async () => {
    const key = newKey();
    const body = { ticketId: ticket.id, spentOn: today, minutes: 30, note: `Retried ${key}` };
    const first = await post('/api/w/{slug}/time', body, key);
    expect(first.status).toBe(201);
    const again = await post('/api/w/{slug}/time', body, key);
    expect(again.status).toBe(201);
    expect(replayed(again)).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await count('time_entries', { note: body.note })).toBe(1);
  });

  it('without a key, a retry writes again (the header is what asks for idempotency)', async () => {
    const body = { projectId: project.id, title: `No key ${newKey()}` };
    expect((await post(tickets, body, null)).status).toBe(201);
    expect((await post(tickets, body, null)).status).toBe(201);
    expect(await count('tickets', { title: body.title })).toBe(2);
  });

  it('five identical requests at once create one ticket, and all five get the same status and body', async () => {
    const key = newKey();
    const body = { projectId: project.id, title: `Concurrent ${key}` };
    const results = await Promise.all(Array.from({ length: 5 }, () => post(tickets, body, key)));
    expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    for (const r of results) expect(r.body).toEqual(results[0]!.body);
    expect(results.filter((r) => replayed(r) === null)).toHaveLength(1);
    expect(await count('tickets', { title: body.title })).toBe(1);
  });

  it('five identical POST /time at once log one entry', async () => {
    const key = newKey();
    const body = { ticketId: ticket.id, spentOn: today, minutes: 5, note: `Concurrent ${key}` };
    const results = await Promise.all(Array.from({ length: 5 }, () => post('/api/w/{slug}/time', body, key)));
    expect(new Set(results.map((r) => r.status))).toEqual(new Set([201]));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(await count('time_entries', { note: body.note })).toBe(1);
  });

  it('a refused request (4xx) is stored too: its replay answers the same error and writes nothing', async () => {
    const key = newKey();
    const body = { projectId: project.id, title: '' };
    const first = await post(tickets, body, key);
    expect(first.status).toBe(400);
    const again = await post(tickets, body, key);
    expect(again.status).toBe(400);
    expect(replayed(again)).toBe('true');
    expect(again.body).toEqual(first.body);
  });
});

describe('mismatches and bad keys', () => {
  it('the same key with another body is 422 idempotency_mismatch and writes nothing', async () => {
    const key = newKey();
    const title = `Original ${key}`;
    expect((await post(tickets, { projectId: project.id, title }, key)).status).toBe(201);
    const other = await post(tickets, { projectId: project.id, title: `Other ${key}` }, key);
    expect(other.status).toBe(422);
    expect(other.body.error).toMatchObject({ code: 'idempotency_mismatch', details: { reason: 'idempotency_mismatch' } });
    expect(await count('tickets', { title: `Other ${key}` })).toBe(0);
    // another path with the same key and body is another request too
    const elsewhere = await post('/api/w/{slug}/time', { projectId: project.id, title }, key);
    expect(elsewhere.status).toBe(422);
  });

  it.each([
    ['empty', ''],
    ['too long', 'k'.repeat(256)],
    ['a control character', 'a\tb'],
    ['non-ASCII', 'clé'],
  ])('a key that is %s is 400 invalid and writes nothing', async (_what, key) => {
    const title = `Bad key ${newKey()}`;
    const res = await post(tickets, { projectId: project.id, title }, key);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid', details: { reason: 'bad_idempotency_key' } });
    expect(await count('tickets', { title })).toBe(0);
  });

  it('accepts 255 printable ASCII characters', async () => {
    const key = ('~ !' + newKey()).padEnd(255, 'x');
    const title = `Long key ${newKey()}`;
    expect((await post(tickets, { projectId: project.id, title }, key)).status).toBe(201);
    expect(replayed(await post(tickets, { projectId: project.id, title }, key))).toBe('true');
  });

  it('an upload (multipart) is refused a key rather than silently not protected', async () => {
    const form = new FormData();
    form.set('file', new Blob(['hello'], { type: 'text/plain' }), 'hello.txt');
    const res = await fetch(`${app.base}${path(`/api/w/{slug}/tickets/${ticket.humanId}/attachments`)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'idempotency-key': newKey() },
      body: form,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.details.reason).toBe('idempotency_unsupported');
    const [{ n }] = await app.db.sql<[{ n: number }]>`select count(*)::int as n from attachments where ticket_id = ${ticket.id}`;
    expect(n).toBe(0);
  });
});

describe('scope and lifetime', () => {
  it('keys belong to one token: another token with the same key and body writes its own ticket', async () => {
    const key = newKey();
    const body = { projectId: project.id, title: `Two tokens ${key}` };
    const other = (await makeToken(app.db.sql, ws, owner)).token;
    expect((await post(tickets, body, key)).status).toBe(201);
    const second = await post(tickets, body, key, other);
    expect(second.status).toBe(201);
    expect(replayed(second)).toBeNull();
    expect(await count('tickets', { title: body.title })).toBe(2);
  });

  it('a key is forgotten after 24 hours', async () => {
    const key = newKey();
    const body = { projectId: project.id, title: `Expired ${key}` };
    expect((await post(tickets, body, key)).status).toBe(201);
    await app.db.sql`update idempotency_keys set expires_at = now() - interval '1 second' where key = ${key}`;
    const later = await post(tickets, body, key);
    expect(later.status).toBe(201);
    expect(replayed(later)).toBeNull();
    expect(await count('tickets', { title: body.title })).toBe(2);
    const [row] = await app.db.sql<{ expires_at: Date; created_at: Date }[]>`select expires_at, created_at from idempotency_keys where key = ${key}`;
    expect(row!.expires_at.getTime() - row!.created_at.getTime()).toBe(24 * 3600_000);
  });

  it('a 5xx is not stored and undoes the request: the retry with the same key runs afresh', async () => {
    const key = newKey();
    const title = `Fails once ${key}`;
    const sql = app.db.sql;
    // a fault injected after the ticket row is written: the ticket must not survive it
    await sql`create function fail_once() returns trigger language plpgsql as $$ begin raise exception 'injected'; end $$`;
    await sql.unsafe(`create trigger fail_once after insert on ticket_events for each row execute function fail_once()`);
    try {
      const failed = await post(tickets, { projectId: project.id, title }, key);
      expect(failed.status).toBe(500);
      expect(await count('tickets', { title })).toBe(0);
      const [{ n }] = await sql<[{ n: number }]>`select count(*)::int as n from idempotency_keys where key = ${key}`;
      expect(n).toBe(0);
    } finally {
      await sql.unsafe(`drop trigger fail_once on ticket_events; drop function fail_once()`);
    }
    const retried = await post(tickets, { projectId: project.id, title }, key);
    expect(retried.status).toBe(201);
    expect(replayed(retried)).toBeNull();
    expect(await count('tickets', { title })).toBe(1);
  });

  it('browser sessions ignore the header (the UI does not retry writes)', async () => {
    const session = await login(app, owner.email, owner.password);
    const key = newKey();
    const body = { projectId: project.id, title: `Session ${key}` };
    for (let i = 0; i < 2; i++) {
      const res = await app.call('POST', path(tickets), { session, body, headers: { 'idempotency-key': key } });
      expect(res.status).toBe(201);
      expect(replayed(res)).toBeNull();
    }
    expect(await count('tickets', { title: body.title })).toBe(2);
  });

  it('stores the response, never the token', async () => {
    const rows = await app.db.sql<{ token_id: string; body: string | null }[]>`select token_id, body from idempotency_keys`;
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(r.body ?? '').not.toContain(token);
  });
});

describe('MCP write tools take idempotencyKey', () => {
  it('lists the argument on write tools only', async () => {
    const mcp = await mcpSession(app, token);
    try {
      const create = mcp.tools.find((t) => t.name === 'create_ticket')!;
      expect(create.inputSchema.properties).toHaveProperty('idempotencyKey');
      const read = mcp.tools.find((t) => t.name === 'get_ticket')!;
      expect(read.inputSchema.properties).not.toHaveProperty('idempotencyKey');
    } finally {
      await mcp.close();
    }
  });

  it('create_ticket and log_time retried with the same key write once and return the same result', async () => {
    const mcp = await mcpSession(app, token);
    try {
      const key = newKey();
      const args = { project: project.key, title: `MCP retried ${key}`, idempotencyKey: key };
      const first = await mcp.ok('create_ticket', args);
      const again = await mcp.ok('create_ticket', args);
      expect(again).toEqual(first);
      expect(await count('tickets', { title: args.title })).toBe(1);

      const timeKey = newKey();
      const time = { ticket: ticket.humanId, spentOn: today, minutes: 15, note: `MCP retried ${timeKey}`, idempotencyKey: timeKey };
      const results = await Promise.all([1, 2, 3].map(() => mcp.ok('log_time', time)));
      expect(new Set(results.map((r) => JSON.stringify(r))).size).toBe(1);
      expect(await count('time_entries', { note: time.note })).toBe(1);
    } finally {
      await mcp.close();
    }
  });

  it('the same key with other arguments is an idempotency_mismatch result; a bad key is invalid', async () => {
    const mcp = await mcpSession(app, token);
    try {
      const key = newKey();
      await mcp.ok('create_ticket', { project: project.key, title: `MCP original ${key}`, idempotencyKey: key });
      const other = await mcp.fail('create_ticket', { project: project.key, title: `MCP other ${key}`, idempotencyKey: key });
      expect(other.code).toBe('idempotency_mismatch');
      expect(await count('tickets', { title: `MCP other ${key}` })).toBe(0);
      const bad = await mcp.fail('create_ticket', { project: project.key, title: `MCP bad ${key}`, idempotencyKey: '' });
      expect(bad.code).toBe('invalid');
      expect(await count('tickets', { title: `MCP bad ${key}` })).toBe(0);
    } finally {
      await mcp.close();
    }
  });
});
