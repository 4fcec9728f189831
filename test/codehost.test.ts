import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

let app: TestApp;
let ws: Workspace;
let project: { id: string; key: string };
let hiddenProject: { id: string; key: string };
let member: Person;
let memberToken: string;
let limitedToken: string;
let readOnlyToken: string;
let memberSession: SessionCookie;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  member = await makeUser(sql, ws, { role: 'member' });
  const limited = await makeUser(sql, ws, { role: 'member' });
  project = await makeProject(sql, ws, { members: [{ person: member }, { person: limited, access: 'limited' }] });
  hiddenProject = await makeProject(sql, ws);
  memberToken = (await makeToken(sql, ws, member)).token;
  limitedToken = (await makeToken(sql, ws, limited)).token;
  readOnlyToken = (await makeToken(sql, ws, member, { scopes: ['read'] })).token;
  memberSession = await login(app, member.email, member.password);
});
afterAll(() => app.close());

const add = (ref: string, body: unknown, token = memberToken) => app.call('POST', `/api/w/${ws.slug}/tickets/${ref}/codehost`, { token, body });
const remove = (ref: string, id: string, token = memberToken) => app.call('DELETE', `/api/w/${ws.slug}/tickets/${ref}/codehost/${id}`, { token });
const ticket = (title?: string) => makeTicket(app.db.sql, ws, { projectId: project.id, title });
const stored = (ticketId: string) => app.db.sql`select id, repo, sha, pr, url from codehost_links where ticket_id = ${ticketId} order by created_at`;
const events = (id: string, kind: string) =>
  app.db.sql<{ payload: any }[]>`select payload from ticket_events where ticket_id = ${id} and kind = ${kind} order by created_at, id`;

const SHA = 'ABCDEF0123456789abcdef0123456789abcdef01';
const commit = { repo: 'acme/web-app', url: `https://github.com/acme/web-app/commit/${SHA.toLowerCase()}`, sha: SHA };

describe('POST /tickets/{ref}/codehost', () => {
  it('stores a commit reference: 201 CodehostLink, sha lower-cased, codehost_added event', async () => {
    const t = await ticket();
    const res = await add(t.humanId, commit);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      repo: 'acme/web-app',
      sha: SHA.toLowerCase(),
      pr: null,
      url: commit.url,
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
    expect(await stored(t.id)).toHaveLength(1);
    expect((await events(t.id, 'codehost_added')).map((e) => e.payload)).toEqual([
      { linkId: res.body.id, repo: 'acme/web-app', sha: SHA.toLowerCase(), pr: null },
    ]);
  });

  it('stores a pull request reference (sha null), matching owner and name case-insensitively', async () => {
    const t = await ticket();
    const res = await add(t.id, { repo: 'Acme/Web.App', url: 'https://github.com/acme/web.app/pull/42', pr: 42, sha: null });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ repo: 'Acme/Web.App', sha: null, pr: 42, url: 'https://github.com/acme/web.app/pull/42' });
  });

  it('the same reference twice is stored once: the second answers the first, without an event', async () => {
    const t = await ticket();
    const first = await add(t.humanId, commit);
    const second = await add(t.humanId, {
      ...commit,
      repo: 'ACME/web-app',
      url: 'https://github.com/ACME/web-app/commit/abcdef0' + SHA.slice(7).toLowerCase(),
    });
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(await stored(t.id)).toHaveLength(1);
    expect(await events(t.id, 'codehost_added')).toHaveLength(1);
    // a pull request in the same repo is another reference
    expect((await add(t.humanId, { repo: 'acme/web-app', url: 'https://github.com/acme/web-app/pull/7', pr: 7 })).body.id).not.toBe(first.body.id);
  });

  const cases: [string, string, Record<string, unknown>][] = [
    ['repo_format', 'repo', { ...commit, repo: undefined }],
    ['repo_format', 'repo', { ...commit, repo: '' }],
    ['repo_format', 'repo', { ...commit, repo: 'acme' }],
    ['repo_format', 'repo', { ...commit, repo: 'acme/web/app' }],
    ['repo_format', 'repo', { ...commit, repo: 'acme/..' }],
    ['repo_format', 'repo', { ...commit, repo: '-acme/web' }],
    ['repo_format', 'repo', { ...commit, repo: 'acme/web app' }],
    ['repo_format', 'repo', { ...commit, repo: `acme/${'a'.repeat(196)}` }],
    ['repo_format', 'repo', { ...commit, repo: 42 }],
    ['github_url', 'url', { ...commit, url: undefined }],
    ['github_url', 'url', { ...commit, url: 'http://github.com/acme/web-app/commit/abcdef0' }],
    ['github_url', 'url', { ...commit, url: 'https://gitlab.com/acme/web-app/commit/abcdef0' }],
    ['github_url', 'url', { ...commit, url: 'https://github.com.evil.test/acme/web-app' }],
    ['github_url', 'url', { ...commit, url: 'https://user:pw@github.com/acme/web-app' }],
    ['github_url', 'url', { ...commit, url: 'https://github.com:8443/acme/web-app' }],
    ['github_url', 'url', { ...commit, url: 'https://github.com/other/web-app/commit/abcdef0' }],
    ['github_url', 'url', { ...commit, url: 'https://github.com/acme' }],
    ['github_url', 'url', { ...commit, url: 'javascript:alert(1)//github.com/acme/web-app' }],
    ['github_url', 'url', { ...commit, url: `https://github.com/acme/web-app/commit/${'a'.repeat(470)}` }],
    ['github_url', 'url', { ...commit, url: 7 }],
    ['sha_format', 'sha', { ...commit, sha: 'abcdef' }],
    ['sha_format', 'sha', { ...commit, sha: 'a'.repeat(41) }],
    ['sha_format', 'sha', { ...commit, sha: 'abcdefg' }],
    ['sha_format', 'sha', { ...commit, sha: 1234567 }],
    ['pr_format', 'pr', { ...commit, sha: undefined, pr: 0 }],
    ['pr_format', 'pr', { ...commit, sha: undefined, pr: -3 }],
    ['pr_format', 'pr', { ...commit, sha: undefined, pr: 1.5 }],
    ['pr_format', 'pr', { ...commit, sha: undefined, pr: '12' }],
    ['pr_format', 'pr', { ...commit, sha: undefined, pr: 2 ** 31 }],
    ['sha_or_pr_required', 'sha', { ...commit, sha: undefined }],
    ['sha_or_pr_required', 'sha', { ...commit, sha: null, pr: null }],
    ['sha_or_pr_required', 'sha', { ...commit, pr: 3 }],
  ];
  it.each(cases)('400 %s (field %s) for %j', async (reason, field, body) => {
    const t = await ticket();
    const res = await add(t.humanId, body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid', details: { reason, field } });
    expect(await stored(t.id)).toHaveLength(0);
  });

  it('400 validation for a body that is not an object', async () => {
    const t = await ticket();
    const res = await add(t.humanId, ['acme/web']);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid');
  });

  it('403 without edit rights, and for a token without write', async () => {
    const t = await ticket();
    const res = await add(t.humanId, commit, limitedToken);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
    expect((await add(t.humanId, commit, readOnlyToken)).status).toBe(403);
    expect(await stored(t.id)).toHaveLength(0);
  });

  it('404 for a hidden or unknown ticket', async () => {
    const hidden = await makeTicket(app.db.sql, ws, { projectId: hiddenProject.id });
    const res = await add(hidden.humanId, commit);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
    expect((await add(`${project.key}-99999`, commit)).status).toBe(404);
    expect(await stored(hidden.id)).toHaveLength(0);
  });
});

describe('DELETE /tickets/{ref}/codehost/{linkId}', () => {
  it('removes the reference with a codehost_removed event', async () => {
    const t = await ticket();
    const id = (await add(t.humanId, commit)).body.id;
    const res = await remove(t.humanId, id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expect(await stored(t.id)).toHaveLength(0);
    expect((await events(t.id, 'codehost_removed')).map((e) => e.payload)).toEqual([{ linkId: id, repo: 'acme/web-app', sha: SHA.toLowerCase(), pr: null }]);
    expect((await remove(t.humanId, id)).status).toBe(404);
  });

  it('404 for a reference of another ticket, an unknown one, or a hidden ticket; 400 for a bad id', async () => {
    const [a, b] = [await ticket(), await ticket()];
    const id = (await add(a.humanId, commit)).body.id;
    const other = await remove(b.humanId, id);
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('not_found');
    expect((await remove(a.humanId, '6f1c2b7e-3d4a-4f5b-8c9d-0e1f2a3b4c5d')).status).toBe(404);
    const hidden = await makeTicket(app.db.sql, ws, { projectId: hiddenProject.id });
    expect((await remove(hidden.humanId, id)).status).toBe(404);
    expect((await remove(a.humanId, 'nope')).status).toBe(400);
    expect(await stored(a.id)).toHaveLength(1);
  });

  it('403 without edit rights', async () => {
    const t = await ticket();
    const id = (await add(t.humanId, commit)).body.id;
    const res = await remove(t.humanId, id, limitedToken);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
    expect((await remove(t.humanId, id, readOnlyToken)).status).toBe(403);
    expect(await stored(t.id)).toHaveLength(1);
  });
});

describe('GET /codehost/links', () => {
  it('is session only', async () => {
    const res = await app.call('GET', `/api/w/${ws.slug}/codehost/links`, { token: memberToken });
    expect(res.status).toBe(403);
    expect(res.body.error.details).toMatchObject({ reason: 'session_required' });
  });

  it('lists references on visible tickets only, newest first, with the ticket, at most 500', async () => {
    const other = await makeWorkspace(app.db.sql);
    const otherOwner = await makeUser(app.db.sql, other, { role: 'owner' });
    const otherTicket = await makeTicket(app.db.sql, other);
    await app.db
      .sql`insert into codehost_links (workspace_id, ticket_id, repo, pr, url) values (${other.id}, ${otherTicket.id}, 'x/y', 1, 'https://github.com/x/y/pull/1')`;
    const hidden = await makeTicket(app.db.sql, ws, { projectId: hiddenProject.id });
    await app.db
      .sql`insert into codehost_links (workspace_id, ticket_id, repo, pr, url, created_at) values (${ws.id}, ${hidden.id}, 'acme/secret', 1, 'https://github.com/acme/secret/pull/1', now() + interval '1 day')`;
    const t = await ticket('Visible one');
    // 505 references on one visible ticket, one second apart
    await app.db.sql`
      insert into codehost_links (workspace_id, ticket_id, repo, pr, url, created_at)
      select ${ws.id}, ${t.id}, 'acme/web', n, 'https://github.com/acme/web/pull/' || n, timestamptz '2030-01-01' + n * interval '1 second'
      from generate_series(1, 505) n`;
    const res = await app.call('GET', `/api/w/${ws.slug}/codehost/links`, { session: memberSession });
    expect(res.status).toBe(200);
    expect(res.body.links).toHaveLength(500);
    expect(res.body.links[0]).toEqual({
      id: expect.any(String),
      repo: 'acme/web',
      sha: null,
      pr: 505,
      url: 'https://github.com/acme/web/pull/505',
      createdAt: '2030-01-01T00:08:25.000Z',
      ticket: { id: t.id, humanId: t.humanId, title: 'Visible one' },
    });
    const prs = res.body.links.map((l: any) => l.pr);
    expect(prs).toEqual([...prs].sort((a: number, b: number) => b - a));
    expect(res.body.links.some((l: any) => l.repo === 'acme/secret' || l.repo === 'x/y')).toBe(false);
    // the other workspace's owner sees only their own
    const s = await login(app, otherOwner.email, otherOwner.password);
    const theirs = await app.call('GET', `/api/w/${other.slug}/codehost/links`, { session: s });
    expect(theirs.body.links.map((l: any) => l.repo)).toEqual(['x/y']);
  });
});
