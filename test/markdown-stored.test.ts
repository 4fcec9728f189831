import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crons } from '../src/core/jobs/catalog.ts';
import { refreshStoredHtml } from '../src/core/tickets/markdown-refresh.ts';
import { MARKDOWN_VERSION } from '../src/core/tickets/markdown.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeComment, makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Workspace } from './helpers/factories.ts';

/**
 * The HTML of comments and descriptions is rendered by the writer and stored beside the Markdown
 * (sql/110); the page passes it through when the current renderer made it and renders anything
 * else itself, so a stored HTML can never be shown beside another text.
 */

let app: TestApp;
let ws: Workspace;
let token: string;
let projectId: string;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  const owner = await makeUser(sql, ws, { role: 'owner' });
  token = (await makeToken(sql, ws, owner)).token;
  projectId = (await makeProject(sql, ws)).id;
});
afterAll(() => app.close());

const path = (p: string) => `/api/w/${ws.slug}${p}`;
const page = async (ref: string) => {
  const res = await app.call('GET', path(`/tickets/${ref}`), { token });
  expect(res.status).toBe(200);
  return res.body as { descriptionHtml: string; comments: { id: string; body: string; bodyHtml: string }[] };
};
const commentRow = async (id: string) =>
  (
    await app.db.sql<{ html: string | null; version: number | null }[]>`select body_html as html, body_html_version as version from comments where id = ${id}`
  )[0]!;
const ticketRow = async (id: string) =>
  (
    await app.db.sql<{ html: string | null; version: number | null }[]>`
    select description_html as html, description_html_version as version from tickets where id = ${id}`
  )[0]!;

describe('stored markdown html', () => {
  it('the API writers store the HTML with the renderer version, and the page sends what is stored', async () => {
    const created = await app.call('POST', path('/tickets'), { token, body: { projectId, title: 'Stored', description: 'Hello **there**' } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(await ticketRow(id)).toEqual({ html: '<p>Hello <strong>there</strong></p>\n', version: MARKDOWN_VERSION });
    const c = await app.call('POST', path(`/tickets/${id}/comments`), { token, body: { body: 'a _first_ note' } });
    expect(c.status).toBe(201);
    expect(await commentRow(c.body.id)).toEqual({ html: '<p>a <em>first</em> note</p>\n', version: MARKDOWN_VERSION });

    // edits render again
    expect((await app.call('PATCH', path(`/tickets/${id}/comments/${c.body.id}`), { token, body: { body: 'a `second` note' } })).status).toBe(200);
    expect(await commentRow(c.body.id)).toEqual({ html: '<p>a <code>second</code> note</p>\n', version: MARKDOWN_VERSION });
    expect((await app.call('PATCH', path(`/tickets/${id}`), { token, body: { description: '# Title' } })).status).toBe(200);
    expect(await ticketRow(id)).toEqual({ html: '<h1>Title</h1>\n', version: MARKDOWN_VERSION });

    // the page reads the stored HTML: a marker put there directly is what it sends
    await app.db.sql`update comments set body_html = '<p>from the store</p>' where id = ${c.body.id}`;
    await app.db.sql`update tickets set description_html = '<p>stored description</p>' where id = ${id}`;
    const p = await page(id);
    expect(p.descriptionHtml).toBe('<p>stored description</p>');
    expect(p.comments.map((x) => x.bodyHtml)).toEqual(['<p>from the store</p>']);
  });

  it('a text changed without its HTML (any other writer, a redaction) drops the stored HTML, and the page renders the new text', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId, description: 'old' });
    const c = await app.call('POST', path(`/tickets/${t.id}/comments`), { token, body: { body: 'old **text**' } });
    expect((await app.call('PATCH', path(`/tickets/${t.id}`), { token, body: { description: 'old *description*' } })).status).toBe(200);
    expect((await commentRow(c.body.id)).html).toBe('<p>old <strong>text</strong></p>\n');

    await app.db.sql`update comments set body = 'new **text**' where id = ${c.body.id}`;
    await app.db.sql`update tickets set description = 'new *description*' where id = ${t.id}`;
    expect(await commentRow(c.body.id)).toEqual({ html: null, version: null });
    expect(await ticketRow(t.id)).toEqual({ html: null, version: null });
    const p = await page(t.id);
    expect(p.comments[0]!.bodyHtml).toBe('<p>new <strong>text</strong></p>\n');
    expect(p.descriptionHtml).toBe('<p>new <em>description</em></p>\n');

    // an update that leaves the text alone keeps the HTML
    await app.db.sql`update comments set body_html = '<p>kept</p>', body_html_version = ${MARKDOWN_VERSION} where id = ${c.body.id}`;
    await app.db.sql`update comments set audience = 'client' where id = ${c.body.id}`;
    expect((await commentRow(c.body.id)).html).toBe('<p>kept</p>');
  });

  it('HTML of another renderer version is not sent: the page renders the text', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId, description: 'desc' });
    const c = await app.call('POST', path(`/tickets/${t.id}/comments`), { token, body: { body: 'current _one_' } });
    await app.db.sql`update comments set body_html = '<p>made by an old renderer</p>', body_html_version = ${MARKDOWN_VERSION - 1} where id = ${c.body.id}`;
    await app.db.sql`update tickets set description_html = '<p>old</p>', description_html_version = ${MARKDOWN_VERSION - 1} where id = ${t.id}`;
    const p = await page(t.id);
    expect(p.comments[0]!.bodyHtml).toBe('<p>current <em>one</em></p>\n');
    expect(p.descriptionHtml).toBe('<p>desc</p>\n');
  });

  it('markdown:refresh renders the rows no writer rendered, in batches, one ticket or all, and leaves current rows alone', async () => {
    expect(crons.markdownRefresh.task).toBe('markdown:refresh');
    const sql = app.db.sql;
    const a = await makeTicket(sql, ws, { projectId, description: 'A *desc*' });
    const b = await makeTicket(sql, ws, { projectId, description: 'B' });
    const author = (await makeUser(sql, ws, { role: 'member' })).id;
    for (let i = 0; i < 3; i++) await makeComment(sql, ws, { ticketId: a.id, body: `comment **${i}**`, authorId: author });
    await makeComment(sql, ws, { ticketId: b.id, body: 'on b', authorId: author });

    // one ticket: its description and its three comments
    expect(await refreshStoredHtml(sql, { ticketIds: [a.id] })).toBe(4);
    expect(await ticketRow(a.id)).toEqual({ html: '<p>A <em>desc</em></p>\n', version: MARKDOWN_VERSION });
    const rows = await sql<{ html: string }[]>`select body_html as html from comments where ticket_id = ${a.id} order by body`;
    expect(rows.map((r) => r.html)).toEqual([0, 1, 2].map((i) => `<p>comment <strong>${i}</strong></p>\n`));
    expect(await refreshStoredHtml(sql, { ticketIds: [a.id] })).toBe(0);
    expect((await ticketRow(b.id)).html).toBeNull();

    // everything, bounded by maxRows per call
    const [{ left }] = await sql<[{ left: number }]>`
      select (select count(*) from comments where coalesce(body_html_version, 0) < ${MARKDOWN_VERSION})::int
           + (select count(*) from tickets where coalesce(description_html_version, 0) < ${MARKDOWN_VERSION})::int as left`;
    expect(left).toBeGreaterThanOrEqual(2);
    expect(await refreshStoredHtml(sql, { maxRows: 1 })).toBe(1);
    expect(await refreshStoredHtml(sql)).toBe(left - 1);
    expect(await refreshStoredHtml(sql)).toBe(0);
    expect((await ticketRow(b.id)).html).toBe('<p>B</p>\n');
  });
});
