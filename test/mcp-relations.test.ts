import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeClient, makeComment, makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { mcpSession, type McpSession } from './helpers/mcp.ts';

let app: TestApp;
let ws: Workspace;
let owner: Person;
let member: Person;
let limited: Person;
let clientPerson: Person;
let otherClientPerson: Person;
let web: { id: string; key: string };
let hidden: { id: string; key: string };
let token: string;
let s: McpSession;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  owner = await makeUser(sql, ws, { role: 'owner' });
  member = await makeUser(sql, ws, { name: 'Mia Member' });
  limited = await makeUser(sql, ws);
  const client = await makeClient(sql, ws);
  const otherClient = await makeClient(sql, ws);
  clientPerson = await makeUser(sql, ws, { role: 'client', clientId: client.id, name: 'Cleo Client' });
  otherClientPerson = await makeUser(sql, ws, { role: 'client', clientId: otherClient.id });
  web = await makeProject(sql, ws, { billingClientId: client.id, members: [{ person: member }, { person: limited, access: 'limited' }] });
  hidden = await makeProject(sql, ws);
  token = (await makeToken(sql, ws, member)).token;
  s = await mcpSession(app, token);
});
afterAll(async () => {
  await s.close();
  await app.close();
});

const page = async (ref: string) => (await app.call('GET', `/api/w/${ws.slug}/tickets/${ref}`, { token })).body;
const ticket = (title = 'A ticket') => makeTicket(app.db.sql, ws, { projectId: web.id, title });

describe('comments', () => {
  it('add_comment: source mcp, author the token person, mentions by email make client people viewers', async () => {
    const t = await ticket();
    const out = await s.ok('add_comment', { ticket: t.humanId, body: 'Hello @Cleo', audience: 'client', mentions: [clientPerson.email] });
    expect(out).toMatchObject({ author: 'Mia Member', audience: 'client', body: 'Hello @Cleo', source: 'mcp', edited: false });
    const p = await page(t.id);
    expect(p.comments[0]).toMatchObject({ id: out.id, source: 'mcp', author: { id: member.id } });
    expect(p.viewers.map((v: any) => v.identityId)).toContain(clientPerson.id);
    // default audience for a workspace user is internal
    expect((await s.ok('add_comment', { ticket: t.id, body: 'note' })).audience).toBe('internal');
  });

  it('add_comment errors: denied mention, empty body, unknown person, invisible ticket', async () => {
    const t = await ticket();
    expect(await s.fail('add_comment', { ticket: t.id, body: 'x', audience: 'client', mentions: [otherClientPerson.id] })).toMatchObject({
      code: 'forbidden',
      reason: 'share_forbidden',
      details: { identityId: otherClientPerson.id },
    });
    expect(await s.fail('add_comment', { ticket: t.id, body: '' })).toMatchObject({ code: 'invalid', details: { field: 'body' } });
    expect(await s.fail('add_comment', { ticket: t.id, body: '   ' })).toMatchObject({ code: 'invalid', reason: 'validation' });
    expect(await s.fail('add_comment', { ticket: t.id, body: 'x', mentions: ['ghost@example.test'] })).toMatchObject({
      reason: 'unknown_person',
      details: { field: 'mentions.0' },
    });
    const h = await makeTicket(app.db.sql, ws, { projectId: hidden.id });
    expect(await s.fail('add_comment', { ticket: h.humanId, body: 'x' })).toMatchObject({ code: 'not_found' });
    expect((await page(t.id)).comments).toEqual([]);
  });

  it('list_comments pages oldest first with the REST cursor; edit_comment and delete_comment', async () => {
    const t = await ticket();
    for (let i = 0; i < 3; i++)
      await makeComment(app.db.sql, ws, { ticketId: t.id, body: `c${i}`, authorId: member.id, createdAt: new Date(Date.now() - (5 - i) * 1000) });
    const first = await s.ok('list_comments', { ticket: t.humanId, limit: 2 });
    expect(first.items.map((c: any) => c.body)).toEqual(['c0', 'c1']);
    const rest = (await app.call('GET', `/api/w/${ws.slug}/tickets/${t.id}/comments?limit=2&cursor=${first.nextCursor}`, { token })).body;
    const second = await s.ok('list_comments', { ticket: t.humanId, limit: 2, cursor: first.nextCursor });
    expect(second.items.map((c: any) => c.id)).toEqual(rest.items.map((c: any) => c.id));
    expect(second.nextCursor).toBeNull();
    expect(await s.fail('list_comments', { ticket: t.id, cursor: 'garbage' })).toMatchObject({ reason: 'bad_cursor' });
    expect(await s.fail('list_comments', { ticket: t.id, limit: 51 })).toMatchObject({ code: 'invalid', details: { field: 'limit' } });

    const id = first.items[0].id;
    const edited = await s.ok('edit_comment', { ticket: t.id, comment: id, body: 'c0, edited' });
    expect(edited).toMatchObject({ id, body: 'c0, edited', edited: true });
    expect(await s.fail('edit_comment', { ticket: t.id, comment: 'nope' })).toMatchObject({
      code: 'invalid',
      reason: 'bad_uuid',
      details: { argument: 'comment' },
    });
    expect(await s.fail('edit_comment', { ticket: t.id, comment: id })).toMatchObject({ code: 'invalid', reason: 'validation' });

    const ownerSession = await mcpSession(app, (await makeToken(app.db.sql, ws, owner)).token);
    expect(await ownerSession.fail('edit_comment', { ticket: t.id, comment: id, body: 'not mine' })).toMatchObject({ code: 'forbidden', reason: 'not_author' });
    await ownerSession.close();

    expect(await s.ok('delete_comment', { ticket: t.id, comment: id })).toEqual({ ok: true });
    expect(await s.fail('delete_comment', { ticket: t.id, comment: id })).toMatchObject({ code: 'not_found', reason: 'unknown_comment' });
    expect((await page(t.id)).comments.map((c: any) => c.body)).toEqual(['c1', 'c2']);
  });
});

describe('links and parents', () => {
  it('link_tickets by human id; already linked answers id null; unlink by target or linkId', async () => {
    const a = await ticket('A');
    const b = await ticket('B');
    const out = await s.ok('link_tickets', { ticket: a.humanId, target: b.humanId, kind: 'blocks' });
    expect(out.id).toEqual(expect.any(String));
    expect(await s.ok('link_tickets', { ticket: a.humanId, target: b.id, kind: 'blocks' })).toEqual({ id: null });
    const detail = await s.ok('get_ticket', { ticket: b.humanId });
    expect(detail.links.blockedBy).toEqual([{ id: a.id, humanId: a.humanId, title: 'A', state: 'Todo', linkId: out.id }]);

    await s.ok('link_tickets', { ticket: a.id, target: b.id, kind: 'relates' });
    const ambiguous = await s.fail('unlink_tickets', { ticket: a.humanId, target: b.humanId });
    expect(ambiguous).toMatchObject({ code: 'invalid', reason: 'ambiguous_link' });
    expect(ambiguous.details.choices.map((c: any) => c.kind).sort()).toEqual(['blocks', 'relates']);
    expect(await s.ok('unlink_tickets', { ticket: a.humanId, target: b.humanId, kind: 'relates' })).toEqual({ ok: true });
    expect(await s.ok('unlink_tickets', { ticket: b.humanId, linkId: out.id })).toEqual({ ok: true });
    expect(await s.fail('unlink_tickets', { ticket: a.humanId, linkId: out.id })).toMatchObject({ code: 'not_found', reason: 'unknown_link' });
    expect(await s.fail('unlink_tickets', { ticket: a.humanId, target: b.humanId })).toMatchObject({ code: 'not_found', reason: 'unknown_link' });
    expect(await s.fail('unlink_tickets', { ticket: a.humanId })).toMatchObject({ code: 'invalid', reason: 'link_required' });
    expect((await page(a.id)).links).toMatchObject({ blocks: [], relates: [] });
  });

  it('link errors: self link, cycle, invisible target, no edit right', async () => {
    const a = await ticket();
    const b = await ticket();
    expect(await s.fail('link_tickets', { ticket: a.humanId, target: a.humanId, kind: 'relates' })).toMatchObject({ code: 'invalid', reason: 'self_link' });
    await s.ok('link_tickets', { ticket: a.humanId, target: b.humanId, kind: 'blocks' });
    expect(await s.fail('link_tickets', { ticket: b.humanId, target: a.humanId, kind: 'blocks' })).toMatchObject({
      code: 'conflict',
      reason: 'dependency_cycle',
    });
    const h = await makeTicket(app.db.sql, ws, { projectId: hidden.id });
    expect(await s.fail('link_tickets', { ticket: a.humanId, target: h.humanId, kind: 'relates' })).toMatchObject({
      code: 'not_found',
      details: { field: 'target' },
    });
    expect(await s.fail('link_tickets', { ticket: a.humanId, target: h.id, kind: 'relates' })).toMatchObject({
      code: 'not_found',
      details: { field: 'targetId', argument: 'target' },
    });
    expect(await s.fail('link_tickets', { ticket: a.humanId, target: b.humanId, kind: 'causes' })).toMatchObject({
      code: 'invalid',
      details: { field: 'kind' },
    });
    const lim = await mcpSession(app, (await makeToken(app.db.sql, ws, limited)).token);
    expect(await lim.fail('link_tickets', { ticket: a.humanId, target: b.humanId, kind: 'relates' })).toMatchObject({
      code: 'forbidden',
      reason: 'edit_forbidden',
    });
    await lim.close();
  });

  it('set_parent by human id, then top-level again; cycles are refused', async () => {
    const parent = await ticket('Parent');
    const child = await ticket('Child');
    expect(await s.ok('set_parent', { ticket: child.humanId, parent: parent.humanId })).toEqual({ ok: true });
    expect((await page(child.id)).parentId).toBe(parent.id);
    expect(await s.fail('set_parent', { ticket: parent.humanId, parent: child.humanId })).toMatchObject({ code: 'conflict', reason: 'own_ancestor' });
    expect(await s.fail('set_parent', { ticket: child.humanId, parent: child.humanId })).toMatchObject({ code: 'invalid', reason: 'self_parent' });
    expect(await s.fail('set_parent', { ticket: child.humanId, parent: 'WEB-99999' })).toMatchObject({ code: 'not_found', details: { field: 'parent' } });
    expect(await s.ok('set_parent', { ticket: child.id, parent: null })).toEqual({ ok: true });
    expect((await page(child.id)).parentId).toBeNull();
  });
});

describe('code-host links', () => {
  it('add (stored once) and remove', async () => {
    const t = await ticket();
    const args = { ticket: t.humanId, repo: 'acme/web', url: 'https://github.com/acme/web/pull/7', pr: 7 };
    const out = await s.ok('add_codehost_link', args);
    expect(out).toMatchObject({ repo: 'acme/web', pr: 7, sha: null, url: args.url });
    expect((await s.ok('add_codehost_link', args)).id).toBe(out.id);
    expect((await s.ok('get_ticket', { ticket: t.id })).codehost).toEqual([{ id: out.id, repo: 'acme/web', sha: null, pr: 7, url: args.url }]);
    expect(await s.ok('remove_codehost_link', { ticket: t.humanId, linkId: out.id })).toEqual({ ok: true });
    expect(await s.fail('remove_codehost_link', { ticket: t.humanId, linkId: out.id })).toMatchObject({ code: 'not_found', reason: 'unknown_link' });
    expect(await s.fail('remove_codehost_link', { ticket: t.humanId, linkId: 'x' })).toMatchObject({ code: 'invalid', reason: 'bad_uuid' });
    expect((await page(t.id)).codehost).toEqual([]);
  });

  it('the contract reasons, each with field', async () => {
    const t = await ticket();
    const base = { ticket: t.id, repo: 'acme/web', url: 'https://github.com/acme/web/commit/abcdef1' };
    expect(await s.fail('add_codehost_link', { ...base, repo: 'not a repo', sha: 'abcdef1' })).toMatchObject({
      reason: 'repo_format',
      details: { field: 'repo' },
    });
    expect(await s.fail('add_codehost_link', { ...base, url: 'http://evil.example/x', sha: 'abcdef1' })).toMatchObject({ reason: 'github_url' });
    expect(await s.fail('add_codehost_link', { ...base, sha: 'xyz' })).toMatchObject({ reason: 'sha_format', details: { field: 'sha' } });
    expect(await s.fail('add_codehost_link', base)).toMatchObject({ reason: 'sha_or_pr_required' });
    expect(await s.fail('add_codehost_link', { ...base, sha: 'abcdef1', pr: 3 })).toMatchObject({ reason: 'sha_or_pr_required' });
    expect(await s.fail('add_codehost_link', { ...base, pr: 0 })).toMatchObject({ reason: 'pr_format', details: { field: 'pr' } });
    expect(await s.fail('add_codehost_link', { ...base, repo: 'a/'.padEnd(201, 'b'), sha: 'abcdef1' })).toMatchObject({ reason: 'repo_format' });
    expect((await page(t.id)).codehost).toEqual([]);
  });
});
