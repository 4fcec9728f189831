import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type CallResult, type SessionCookie, type TestApp } from './helpers/app.ts';
import { billEntry, makePeriod, makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

/**
 * Redaction removes every piece of descriptive content of a ticket, wherever the API would show
 * it again: the page, its timeline payloads, comments, attachments (listed and downloadable),
 * time-entry notes (billed and closed-period entries included) and search.
 */

/** Every original text carries this word, so one search over a response finds any leftover. */
const SECRET = 'Zelda';

let app: TestApp;
let ws: Workspace;
let owner: Person;
let member: Person;
let ownerToken: string;
let memberToken: string;
let session: SessionCookie;
let projectId: string;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  owner = await makeUser(sql, ws, { role: 'owner' });
  member = await makeUser(sql, ws, { role: 'member' });
  projectId = (await makeProject(sql, ws, { members: [{ person: member }] })).id;
  ownerToken = (await makeToken(sql, ws, owner)).token;
  memberToken = (await makeToken(sql, ws, member)).token;
  session = await login(app, owner.email, owner.password);
  await makePeriod(sql, ws, { start: '2024-05-01', end: '2024-05-31' });
  await makePeriod(sql, ws, { start: '2024-06-01', end: '2024-06-30' });
});
afterAll(() => app.close());

const path = (p: string) => `/api/w/${ws.slug}${p}`;

function ok(res: CallResult, status = 200): CallResult {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  return res;
}

function expectNoSecret(label: string, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  expect(text.toLowerCase().includes(SECRET.toLowerCase()), `${label} still holds "${SECRET}": ${text}`).toBe(false);
}

async function upload(ref: string, filename: string, content: string, fields: Record<string, string> = {}): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(Buffer.from(content))], { type: 'text/plain' }), filename);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const res = await fetch(`${app.base}${path(`/tickets/${ref}/attachments`)}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ownerToken}` },
    body: form,
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

async function download(id: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${app.base}${path(`/attachments/${id}/download`)}`, { headers: { authorization: `Bearer ${ownerToken}` } });
  return { status: res.status, text: await res.text() };
}

/** A ticket whose every descriptive field, comment, attachment, timeline event and time note names the secret. */
async function secretTicket() {
  const sql = app.db.sql;
  const t = await makeTicket(sql, ws, { projectId, title: `${SECRET} draft`, description: `About ${SECRET}` });
  const fields = { title: `${SECRET} salary`, description: `${SECRET} earns a lot`, billingDescription: `${SECRET} review` };
  ok(await app.call('PATCH', path(`/tickets/${t.id}`), { token: ownerToken, body: fields }));
  const comment = ok(
    await app.call('POST', path(`/tickets/${t.id}/comments`), { token: ownerToken, body: { body: `${SECRET} said so`, audience: 'internal' } }),
    201,
  );
  const attachments = [
    await upload(t.humanId, `${SECRET}-payslip.txt`, `${SECRET} bytes`),
    await upload(t.humanId, `${SECRET}-scan.txt`, `${SECRET} scan`, { commentId: comment.body.id }),
  ];
  const log = (spentOn: string, note: string) => app.call('POST', path('/time'), { token: ownerToken, body: { ticketId: t.id, spentOn, minutes: 30, note } });
  const open = ok(await log('2024-06-10', `Met ${SECRET} at home`), 201).body.id as string;
  const billed = ok(await log('2024-06-11', `Called ${SECRET}`), 201).body.id as string;
  const closed = ok(await log('2024-05-10', `${SECRET} visit`), 201).body.id as string;
  // A billing run's allocation and a period close, as they would happen later in the entries' life.
  await billEntry(sql, ws, billed);
  await sql`update periods set closed_at = now(), closed_by = ${owner.id} where workspace_id = ${ws.id} and period_start = '2024-05-01'`;
  return { ...t, attachments, entries: [open, billed, closed] };
}

describe('POST /tickets/{id}/redact removes every descriptive content', () => {
  it('page, timeline payloads, comments, attachments, time notes and search keep nothing of the original', async () => {
    const t = await secretTicket();
    const before = ok(await app.call('GET', path(`/tickets/${t.id}`), { token: ownerToken }));
    // The world really holds the secret everywhere the checks below look.
    expect(JSON.stringify(before.body)).toContain(`${SECRET}-payslip.txt`);
    expect(before.body.events.some((e: { kind: string }) => e.kind === 'attachment_added')).toBe(true);
    expect((await download(t.attachments[0]!)).text).toContain(SECRET);

    const res = ok(await app.call('POST', path(`/tickets/${t.id}/redact`), { session, body: { reason: 'privacy request' } }));
    expect(res.body).toEqual({ ok: true, runs: 0 });

    for (const [who, token] of [
      ['owner', ownerToken],
      ['member', memberToken],
    ] as const) {
      const page = ok(await app.call('GET', path(`/tickets/${t.id}`), { token }));
      expectNoSecret(`page for ${who}`, page.body);
      expect(page.body.title).toBe('[redacted]');
      expect(page.body.attachments).toEqual([]);
      const attachmentEvents = page.body.events.filter((e: { kind: string }) => e.kind === 'attachment_added');
      expect(attachmentEvents).toHaveLength(2);
      for (const e of attachmentEvents) expect(e.payload.filename).toBe('[redacted]');
      expectNoSecret(`comments for ${who}`, ok(await app.call('GET', path(`/tickets/${t.id}/comments`), { token })).body);
      expect(ok(await app.call('GET', path(`/tickets?q=${SECRET}`), { token })).body.items).toEqual([]);
    }

    for (const id of t.attachments) {
      const d = await download(id);
      expect(d.status).toBe(404);
      expectNoSecret('download', d.text);
    }
    const [stored] = await app.db.sql<{ n: number }[]>`select count(*)::int as n from attachments where ticket_id = ${t.id}`;
    expect(stored!.n).toBe(0);
    // nor the HTML stored beside the description and the comment (sql/110: a text changed without it drops it)
    const html = await app.db.sql<{ html: string | null }[]>`
      select description_html as html from tickets where id = ${t.id} union all select body_html from comments where ticket_id = ${t.id}`;
    expect(html.length).toBe(2);
    for (const { html: h } of html) expectNoSecret('stored html', h ?? '');

    const week = ok(await app.call('GET', path(`/time?from=2024-05-01&to=2024-06-30&ticketId=${t.id}`), { token: ownerToken }));
    expectNoSecret('time entries', week.body);
    const notes = new Map(week.body.entries.map((e: { id: string; note: string | null }) => [e.id, e.note]));
    for (const id of t.entries) expect(notes.get(id)).toBe('[redacted]');
    // Only the text changed: the billed entry is still billed, its minutes unchanged.
    const [billed] = await app.db.sql<{ billed: boolean; minutes: number }[]>`select billed, minutes from time_entries where id = ${t.entries[1]!}`;
    expect(billed).toEqual({ billed: true, minutes: 30 });
  });

  it('a second redaction changes nothing more and still answers ok', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId, title: `${SECRET} again`, description: `${SECRET} twice` });
    await upload(t.humanId, `${SECRET}.txt`, SECRET);
    ok(await app.call('POST', path(`/tickets/${t.id}/redact`), { session, body: { reason: 'privacy request' } }));
    ok(await app.call('POST', path(`/tickets/${t.id}/redact`), { session, body: { reason: 'again, to be sure' } }));
    const page = ok(await app.call('GET', path(`/tickets/${t.id}`), { token: ownerToken }));
    expectNoSecret('page', page.body);
    expect(page.body.events.filter((e: { kind: string }) => e.kind === 'redacted').map((e: { payload: unknown }) => e.payload)).toEqual([
      { reason: 'privacy request' },
      { reason: 'again, to be sure' },
    ]);
  });
});
