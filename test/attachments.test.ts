import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeClient, makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

let app: TestApp;
let ws: Workspace;
let projectId: string;
let member: Person;
let reporter: Person;
let t: Record<'member' | 'other' | 'outsider' | 'readOnly' | 'noRead' | 'reporter', string>;

const MB = 1024 * 1024;
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  const a = await makeClient(sql, ws, { name: 'Acme' });
  member = await makeUser(sql, ws, { role: 'member', name: 'Max Member' });
  const other = await makeUser(sql, ws, { role: 'member' });
  const outsider = await makeUser(sql, ws, { role: 'member' });
  reporter = await makeUser(sql, ws, { role: 'client', clientId: a.id, name: 'Rita Reporter' });
  projectId = (await makeProject(sql, ws, { billingClientId: a.id, members: [{ person: member }, { person: other }] })).id;
  t = {
    member: (await makeToken(sql, ws, member)).token,
    other: (await makeToken(sql, ws, other)).token,
    outsider: (await makeToken(sql, ws, outsider)).token,
    readOnly: (await makeToken(sql, ws, member, { scopes: ['read'] })).token,
    noRead: (await makeToken(sql, ws, member, { scopes: ['write'] })).token,
    reporter: (await makeToken(sql, ws, reporter)).token,
  };
});
afterAll(() => app.close());

interface Part {
  name?: string;
  filename: string;
  type: string;
  data: Buffer;
}

async function upload(ref: string, opts: { file?: Part | Part[] | null; fields?: Record<string, string>; token?: string | null } = {}) {
  const form = new FormData();
  const files =
    opts.file === undefined ? [{ filename: 'notes.txt', type: 'text/plain', data: Buffer.from('hello world') }] : opts.file === null ? [] : [opts.file].flat();
  for (const f of files) form.append(f.name ?? 'file', new Blob([new Uint8Array(f.data)], { type: f.type }), f.filename);
  for (const [k, v] of Object.entries(opts.fields ?? {})) form.append(k, v);
  const token = opts.token === undefined ? t.member : opts.token;
  const res = await fetch(`${app.base}/api/w/${ws.slug}/tickets/${ref}/attachments`, {
    method: 'POST',
    headers: token ? { authorization: `Bearer ${token}` } : {},
    body: form,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
}

async function download(id: string, token = t.member) {
  const res = await fetch(`${app.base}/api/w/${ws.slug}/attachments/${id}/download`, { headers: { authorization: `Bearer ${token}` } });
  const data = Buffer.from(await res.arrayBuffer());
  return {
    status: res.status,
    headers: res.headers,
    data,
    json: (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(data.toString()) : null,
  };
}

const ticket = () => makeTicket(app.db.sql, ws, { projectId, reporterId: reporter.id });
const storedCount = async (ticketId: string) =>
  (await app.db.sql<{ n: number }[]>`select count(*)::int as n from attachments where ticket_id = ${ticketId}`)[0]!.n;
const comment = async (ref: string, body: unknown, token = t.member) =>
  (await app.call('POST', `/api/w/${ws.slug}/tickets/${ref}/comments`, { token, body })).body as { id: string; audience: string };

describe('POST /tickets/{ref}/attachments', () => {
  it('stores the file: 201 Attachment, bytes in PostgreSQL, attachment_added event', async () => {
    const tk = await ticket();
    const res = await upload(tk.humanId);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      filename: 'notes.txt',
      contentType: 'text/plain',
      size: 11,
      inline: false,
      audience: 'internal',
      commentId: null,
      uploadedBy: { id: member.id, name: 'Max Member' },
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
    const [row] = await app.db.sql<{ data: Buffer }[]>`select data from attachments where id = ${res.body.id}`;
    expect(row!.data.toString()).toBe('hello world');
    const ev = await app.db.sql<{ payload: any }[]>`select payload from ticket_events where ticket_id = ${tk.id} and kind = 'attachment_added'`;
    expect(ev.map((e) => e.payload)).toEqual([{ attachmentId: res.body.id, filename: 'notes.txt', audience: 'internal' }]);
  });

  it('a client user uploads at the client audience by default; internal is 403 audience_forbidden', async () => {
    const tk = await ticket();
    const res = await upload(tk.humanId, { token: t.reporter });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ audience: 'client', uploadedBy: { id: reporter.id, name: 'Rita Reporter' } });
    const internal = await upload(tk.humanId, { token: t.reporter, fields: { audience: 'internal' } });
    expect(internal.status).toBe(403);
    expect(internal.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'audience_forbidden' } });
    expect(await storedCount(tk.id)).toBe(1);
  });

  it('takes audience, inline and a clean filename and type from the form', async () => {
    const tk = await ticket();
    const res = await upload(tk.humanId, {
      file: { filename: 'C:\\Users\\me\\shot\u0007.png', type: 'IMAGE/PNG; foo=bar', data: PNG },
      fields: { audience: 'client', inline: 'true' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ filename: 'shot.png', contentType: 'image/png', size: PNG.length, inline: true, audience: 'client' });
    const weird = await upload(tk.humanId, { file: { filename: 'x', type: 'not a type', data: Buffer.from('x') } });
    expect(weird.body.contentType).toBe('application/octet-stream');
    const empty = await upload(tk.humanId, { file: { filename: 'empty.bin', type: 'application/octet-stream', data: Buffer.alloc(0) } });
    expect(empty.status).toBe(201);
    expect(empty.body.size).toBe(0);
  });

  it("onto a comment: the caller's own, taking its audience; a different audience is 400 audience_mismatch", async () => {
    const tk = await ticket();
    const c = await comment(tk.humanId, { body: 'see attached', audience: 'client' });
    const res = await upload(tk.humanId, { fields: { commentId: c.id } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ commentId: c.id, audience: 'client' });
    const mismatch = await upload(tk.humanId, { fields: { commentId: c.id, audience: 'internal' } });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.details).toMatchObject({ reason: 'audience_mismatch', field: 'audience' });
    const notMine = await upload(tk.humanId, { fields: { commentId: c.id }, token: t.other });
    expect(notMine.status).toBe(403);
    expect(notMine.body.error.details.reason).toBe('not_author');
    expect((await upload(tk.humanId, { fields: { commentId: randomUUID() } })).status).toBe(404);
    const internal = await comment(tk.humanId, { body: 'staff' });
    expect((await upload(tk.humanId, { fields: { commentId: internal.id }, token: t.reporter })).status).toBe(404);
    expect(await storedCount(tk.id)).toBe(1);
  });

  it('400 without a file part, with two files, or with bad fields; 415 for a JSON body', async () => {
    const tk = await ticket();
    const none = await upload(tk.humanId, { file: null, fields: { audience: 'client' } });
    expect(none.status).toBe(400);
    expect(none.body.error.details).toMatchObject({ reason: 'file_required', field: 'file' });
    const two = await upload(tk.humanId, {
      file: [
        { filename: 'a.txt', type: 'text/plain', data: Buffer.from('a') },
        { filename: 'b.txt', type: 'text/plain', data: Buffer.from('b') },
      ],
    });
    expect(two.status).toBe(400);
    expect(two.body.error.details).toMatchObject({ reason: 'too_many_files' });
    for (const fields of [{ audience: 'public' }, { commentId: 'nope' }, { inline: 'maybe' }] as Record<string, string>[]) {
      const res = await upload(tk.humanId, { fields });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid');
    }
    const garbage = await app.call('POST', `/api/w/${ws.slug}/tickets/${tk.humanId}/attachments`, {
      token: t.member,
      rawBody: '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nunterminated',
      headers: { 'content-type': 'multipart/form-data; boundary=xyz' },
    });
    expect(garbage.status).toBe(400);
    expect(garbage.body.error.code).toBe('invalid');
    const json = await app.call('POST', `/api/w/${ws.slug}/tickets/${tk.humanId}/attachments`, { token: t.member, body: { file: 'aGVsbG8=' } });
    expect(json.status).toBe(415);
    expect(json.body.error.code).toBe('unsupported_media_type');
    expect(await storedCount(tk.id)).toBe(0);
  });

  it('25 MB is accepted; one byte more is 413 in the envelope and nothing is stored', async () => {
    const tk = await ticket();
    const big = await upload(tk.humanId, { file: { filename: 'big.bin', type: 'application/octet-stream', data: Buffer.alloc(25 * MB, 7) } });
    expect(big.status).toBe(201);
    expect(big.body.size).toBe(25 * MB);
    const tooBig = await upload(tk.humanId, { file: { filename: 'huge.bin', type: 'application/octet-stream', data: Buffer.alloc(25 * MB + 1, 7) } });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.error).toMatchObject({ code: 'payload_too_large', details: { reason: 'file_too_large' } });
    expect(await storedCount(tk.id)).toBe(1);
  });

  it('401 without credentials, 403 without write, 404 for a hidden or unknown ticket', async () => {
    const tk = await ticket();
    expect((await upload(tk.humanId, { token: null })).status).toBe(401);
    const ro = await upload(tk.humanId, { token: t.readOnly });
    expect(ro.status).toBe(403);
    expect(ro.body.error.details).toMatchObject({ reason: 'missing_scope', scope: 'write' });
    const hidden = await upload(tk.humanId, { token: t.outsider });
    expect(hidden.status).toBe(404);
    expect(hidden.body.error.code).toBe('not_found');
    expect((await upload('NOPE-1')).status).toBe(404);
    expect(await storedCount(tk.id)).toBe(0);
  });
});

describe('GET /attachments/{id}/download', () => {
  it('serves the bytes with the safe document-download headers', async () => {
    const tk = await ticket();
    const a = (await upload(tk.humanId, { file: { filename: 'report final.pdf', type: 'application/pdf', data: Buffer.from('%PDF-1.7 x') } })).body;
    const res = await download(a.id);
    expect(res.status).toBe(200);
    expect(res.data.toString()).toBe('%PDF-1.7 x');
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="report final.pdf"');
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'unsafe-inline'; sandbox");
    expect(res.headers.get('content-length')).toBe('10');
  });

  it('inline only for a safe image uploaded as inline', async () => {
    const tk = await ticket();
    const inline = (await upload(tk.humanId, { file: { filename: 'shot.png', type: 'image/png', data: PNG }, fields: { inline: 'true' } })).body;
    const res = await download(inline.id);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('content-disposition')).toBe('inline; filename="shot.png"');
    expect(res.data.equals(PNG)).toBe(true);
    const plain = (await upload(tk.humanId, { file: { filename: 'shot.png', type: 'image/png', data: PNG } })).body;
    expect((await download(plain.id)).headers.get('content-disposition')).toBe('attachment; filename="shot.png"');
  });

  it('never serves HTML or SVG under its own type, nor inline', async () => {
    const tk = await ticket();
    for (const [filename, type] of [
      ['page.html', 'text/html'],
      ['logo.svg', 'image/svg+xml'],
      ['feed.xml', 'application/atom+xml'],
      ['app.js', 'text/javascript'],
    ]) {
      const a = (
        await upload(tk.humanId, { file: { filename: filename!, type: type!, data: Buffer.from('<script>alert(1)</script>') }, fields: { inline: 'true' } })
      ).body;
      expect(a.contentType).toBe(type);
      const res = await download(a.id);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/octet-stream');
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${filename}"`);
    }
  });

  it('a non-ASCII filename gets an ASCII fallback and an RFC 5987 filename*', async () => {
    const tk = await ticket();
    const a = (await upload(tk.humanId, { file: { filename: 'Überblick "Q1" 📈.txt', type: 'text/plain', data: Buffer.from('x') } })).body;
    expect(a.filename).toBe('Überblick "Q1" 📈.txt');
    const cd = (await download(a.id)).headers.get('content-disposition');
    expect(cd).toBe(`attachment; filename="_berblick \\"Q1\\" __.txt"; filename*=UTF-8''%C3%9Cberblick%20%22Q1%22%20%F0%9F%93%88.txt`);
  });

  it('client users never download internal attachments (404); client ones they do', async () => {
    const tk = await ticket();
    const internal = (await upload(tk.humanId)).body;
    const client = (await upload(tk.humanId, { fields: { audience: 'client' } })).body;
    const res = await download(internal.id, t.reporter);
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe('not_found');
    expect((await download(client.id, t.reporter)).status).toBe(200);
    // a client-audience attachment on an internal comment stays internal
    const c = await comment(tk.humanId, { body: 'staff' });
    const [odd] = await app.db.sql<{ id: string }[]>`
      insert into attachments (workspace_id, ticket_id, comment_id, filename, content_type, size, audience, data)
      values (${ws.id}, ${tk.id}, ${c.id}, 'odd.txt', 'text/plain', 1, 'client', '\\x41') returning id`;
    expect((await download(odd!.id, t.reporter)).status).toBe(404);
    expect((await download(odd!.id)).status).toBe(200);
  });

  it('404 for a hidden ticket, an unknown id, or another workspace; 400 bad id; 403 without read', async () => {
    const tk = await ticket();
    const a = (await upload(tk.humanId)).body;
    expect((await download(a.id, t.outsider)).status).toBe(404);
    expect((await download(randomUUID())).status).toBe(404);
    const other = await makeWorkspace(app.db.sql);
    const stranger = await makeUser(app.db.sql, other, { role: 'owner' });
    const strangerToken = (await makeToken(app.db.sql, other, stranger)).token;
    const cross = await fetch(`${app.base}/api/w/${other.slug}/attachments/${a.id}/download`, { headers: { authorization: `Bearer ${strangerToken}` } });
    expect(cross.status).toBe(404);
    const bad = await download('nope');
    expect(bad.status).toBe(400);
    const noRead = await download(a.id, t.noRead);
    expect(noRead.status).toBe(403);
    expect(noRead.json.error.details).toMatchObject({ reason: 'missing_scope', scope: 'read' });
  });
});
