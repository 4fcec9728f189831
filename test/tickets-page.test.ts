import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../src/core/tickets/events.ts';
import { login, startTestApp, type TestApp } from './helpers/app.ts';
import {
  addLabels,
  addViewers,
  makeBank,
  makeClient,
  makeComment,
  makeLink,
  makeProject,
  makeTicket,
  makeToken,
  makeUser,
  makeWorkspace,
  type Person,
  type Workspace,
} from './helpers/factories.ts';

let app: TestApp;
let ws: Workspace;
let owner: Person;
let member: Person;
let clientUser: Person;
let ownerToken: string;
let memberToken: string;
let clientToken: string;
let client: { id: string };
let project: { id: string; key: string };

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  owner = await makeUser(sql, ws, { role: 'owner', name: 'Olive Owner' });
  member = await makeUser(sql, ws, { role: 'member', name: 'Mia Member' });
  client = await makeClient(sql, ws, { name: 'Acme Ltd' });
  clientUser = await makeUser(sql, ws, { role: 'client', clientId: client.id, name: 'Carl Client' });
  project = await makeProject(sql, ws, { billingClientId: client.id, members: [{ person: member, access: 'full' }] });
  ownerToken = (await makeToken(sql, ws, owner)).token;
  memberToken = (await makeToken(sql, ws, member)).token;
  clientToken = (await makeToken(sql, ws, clientUser, { scopes: ['read', 'write'] })).token;
});
afterAll(() => app.close());

const page = (ref: string, token: string, headers?: Record<string, string>) =>
  app.call('GET', `/api/w/${ws.slug}/tickets/${encodeURIComponent(ref)}`, { token, headers });

describe('GET /tickets/{ref}: the page', () => {
  it('returns every TicketSummary field plus the page fields, in the contract shape', async () => {
    const sql = app.db.sql;
    const t = await makeTicket(sql, ws, {
      projectId: project.id,
      title: 'Checkout breaks',
      description: 'Steps:\n\n1. open *cart*',
      reporterId: clientUser.id,
      assigneeId: member.id,
      dueDate: '2031-05-06',
      estimateMinutes: 90,
      kindKey: 'bug',
      priorityKey: 'high',
    });
    await sql`update tickets set start_date = '2031-05-01', billing_description = 'Cart fix', billing_mode = 'on_close' where id = ${t.id}`;
    await addLabels(sql, ws, t.id, ['frontend', 'backend']);
    await addViewers(sql, t.id, [member.id], owner.id);
    await makeComment(sql, ws, { ticketId: t.id, body: 'Internal **note**', audience: 'internal', authorId: member.id });
    await makeComment(sql, ws, { ticketId: t.id, body: 'Hello client', audience: 'client', authorId: clientUser.id });
    await sql`insert into codehost_links (workspace_id, ticket_id, repo, sha, url) values (${ws.id}, ${t.id}, 'acme/shop', 'abcdef1', 'https://github.com/acme/shop/commit/abcdef1')`;

    const res = await page(t.humanId, ownerToken);
    expect(res.status).toBe(200);
    const b = res.body;
    expect(b).toMatchObject({
      id: t.id,
      humanId: t.humanId,
      title: 'Checkout breaks',
      kind: { key: 'bug', name: 'Bug' },
      state: { key: 'todo', name: 'Todo', category: 'open', position: 1 },
      priority: { key: 'high', name: 'High', position: 1 },
      project: { id: project.id, key: project.key, name: `Project ${project.key}` },
      queue: null,
      assignee: { id: member.id, name: 'Mia Member', clientName: null },
      reporter: { id: clientUser.id, name: 'Carl Client', clientName: 'Acme Ltd' },
      billingClient: { id: client.id, name: 'Acme Ltd' },
      dueDate: '2031-05-06',
      startDate: '2031-05-01',
      estimateMinutes: 90,
      parentId: null,
      commentCount: 2,
      description: 'Steps:\n\n1. open *cart*',
      source: 'ui',
      startedBy: 'workspace',
      archived: false,
      closedAt: null,
      time: { loggedMinutes: 0, billableMinutes: 0, unbilledMinutes: 0 },
      attachments: [],
      links: { parent: null, children: [], blocks: [], blockedBy: [], relates: [], duplicates: [] },
    });
    expect(b.labels.map((l: { name: string }) => l.name)).toEqual(['backend', 'frontend']);
    expect(b.createdAt).toMatch(ISO_MS);
    expect(b.updatedAt).toMatch(ISO_MS);
    expect(b.descriptionHtml).toContain('<em>cart</em>');
    expect(b.billing).toEqual({
      billingClient: { id: client.id, name: 'Acme Ltd' },
      billingPolicy: null,
      effectiveBillingPolicy: 'paid',
      billingMode: 'on_close',
      effectiveBillingMode: 'on_close',
      billingDescription: 'Cart fix',
      estimateMinutes: 90,
      rollupEstimateMinutes: 90,
    });
    expect(b.comments).toHaveLength(2);
    expect(b.comments[0]).toMatchObject({
      body: 'Internal **note**',
      audience: 'internal',
      author: { id: member.id, name: 'Mia Member', clientName: null },
      source: 'ui',
      edited: false,
    });
    expect(b.comments[0].bodyHtml).toContain('<strong>note</strong>');
    expect(b.comments[1].author.clientName).toBe('Acme Ltd');
    expect(b.codehost).toEqual([
      {
        id: expect.any(String),
        repo: 'acme/shop',
        sha: 'abcdef1',
        pr: null,
        url: 'https://github.com/acme/shop/commit/abcdef1',
        createdAt: expect.stringMatching(ISO_MS),
      },
    ]);
    expect(b.permissions).toMatchObject({ edit: true, read: ['internal', 'client'], setBilling: true, archive: true, seeInternalFigures: true });
    expect(Array.isArray(b.events)).toBe(true);
  });

  it('lists viewers with the reporter first (isReporter, never removable) and canRemove by permission', async () => {
    const sql = app.db.sql;
    const other = await makeUser(sql, ws, { role: 'member', name: 'Otto Other' });
    const t = await makeTicket(sql, ws, { projectId: project.id, reporterId: clientUser.id });
    await addViewers(sql, t.id, [member.id, other.id], owner.id);

    const asOwner = (await page(t.humanId, ownerToken)).body;
    expect(asOwner.viewers.map((v: { identityId: string }) => v.identityId)).toEqual([clientUser.id, member.id, other.id]);
    expect(asOwner.viewers[0]).toMatchObject({ isReporter: true, canRemove: false, kind: 'client', clientName: 'Acme Ltd', addedBy: null });
    expect(asOwner.viewers[1]).toMatchObject({
      name: 'Mia Member',
      email: member.email,
      kind: 'workspace',
      clientName: null,
      addedBy: { id: owner.id, name: 'Olive Owner' },
      isReporter: false,
      canRemove: true,
    });

    // a client user without addViewers may remove only themselves (and never the reporter)
    const viewerClient = await makeUser(sql, ws, { role: 'client', clientId: client.id });
    await addViewers(sql, t.id, [viewerClient.id]);
    const vcToken = (await makeToken(sql, ws, viewerClient, { scopes: ['read', 'write'] })).token;
    const asClient = (await page(t.humanId, vcToken)).body;
    const mine = asClient.viewers.find((v: { identityId: string }) => v.identityId === viewerClient.id);
    const others = asClient.viewers.filter((v: { identityId: string }) => v.identityId !== viewerClient.id);
    expect(mine.canRemove).toBe(true);
    expect(others.every((v: { canRemove: boolean }) => !v.canRemove)).toBe(true);

    // a read-only token may not remove anyone, itself included
    const readOnly = (await makeToken(sql, ws, member, { scopes: ['read'] })).token;
    const asReader = (await page(t.humanId, readOnly)).body;
    expect(asReader.viewers.every((v: { canRemove: boolean }) => !v.canRemove)).toBe(true);
  });

  it('leaves billing out (absent, not null) and internal comments and their events out for client users', async () => {
    const sql = app.db.sql;
    const t = await makeTicket(sql, ws, { projectId: project.id, reporterId: clientUser.id });
    const internal = await makeComment(sql, ws, { ticketId: t.id, body: 'secret margin talk', audience: 'internal', authorId: member.id });
    const shared = await makeComment(sql, ws, { ticketId: t.id, body: 'visible answer', audience: 'client', authorId: member.id });
    const now = new Date();
    await recordEvent(
      sql,
      { workspaceId: ws.id, ticketId: t.id, kind: 'comment_added', actorId: member.id, payload: { commentId: internal.id, audience: 'internal' } },
      now,
    );
    await recordEvent(
      sql,
      { workspaceId: ws.id, ticketId: t.id, kind: 'comment_added', actorId: member.id, payload: { commentId: shared.id, audience: 'client' } },
      now,
    );
    await recordEvent(
      sql,
      { workspaceId: ws.id, ticketId: t.id, kind: 'field_changed', actorId: owner.id, payload: { field: 'billingPolicy', old: null, new: 'free' } },
      now,
    );
    await recordEvent(
      sql,
      { workspaceId: ws.id, ticketId: t.id, kind: 'field_changed', actorId: owner.id, payload: { field: 'title', old: 'a', new: 'b' } },
      now,
    );
    await recordEvent(sql, { workspaceId: ws.id, ticketId: t.id, kind: 'time_logged', actorId: member.id, payload: { entryId: t.id, minutes: 30 } }, now);

    const res = await page(t.humanId, clientToken);
    expect(res.status).toBe(200);
    expect('billing' in res.body).toBe(false);
    expect(res.body.comments.map((c: { body: string }) => c.body)).toEqual(['visible answer']);
    expect(res.body.commentCount).toBe(1);
    expect(res.body.permissions.read).toEqual(['client']);
    expect(res.body.events.map((e: { kind: string; payload: { field?: string } }) => `${e.kind}:${e.payload.field ?? ''}`)).toEqual([
      'comment_added:',
      'field_changed:title',
    ]);

    const staff = (await page(t.humanId, ownerToken)).body;
    expect(staff.comments).toHaveLength(2);
    expect(staff.commentCount).toBe(2);
    expect(staff.events).toHaveLength(5);
    expect(staff.events[0]).toMatchObject({ kind: 'comment_added', actor: { id: member.id, name: 'Mia Member' }, subject: null });
    expect(staff.events[0].createdAt).toMatch(ISO_MS);
  });

  it('renders Markdown safely: raw HTML escaped, dangerous links dropped, links get rel', async () => {
    const t = await makeTicket(app.db.sql, ws, {
      projectId: project.id,
      description:
        '<script>alert(1)</script>\n\n[x](javascript:alert(1)) [site](https://example.com) ![i](https://example.com/a.png) <img src=x onerror=alert(1)>',
    });
    const { body } = await page(t.humanId, ownerToken);
    expect(body.descriptionHtml).not.toContain('<script');
    expect(body.descriptionHtml).not.toMatch(/href="javascript:/i);
    expect(body.descriptionHtml).not.toMatch(/<img[^>]*onerror/);
    expect(body.descriptionHtml).toContain('&lt;script&gt;');
    expect(body.descriptionHtml).toContain('<a href="https://example.com" rel="noopener noreferrer nofollow">site</a>');
    // a remote image is a link, never an <img> every reader's browser would fetch (issue 19, defect 10)
    expect(body.descriptionHtml).toContain('<a href="https://example.com/a.png" rel="noopener noreferrer nofollow">i</a>');
    expect(body.descriptionHtml).not.toContain('<img');
  });

  it('shows only linked tickets the caller can see, with linkIds; duplicates in both directions', async () => {
    const sql = app.db.sql;
    const hidden = await makeProject(sql, ws); // member is not on it
    const t = await makeTicket(sql, ws, { projectId: project.id, title: 'Hub' });
    const parent = await makeTicket(sql, ws, { projectId: project.id, title: 'Parent' });
    await sql`update tickets set parent_id = ${parent.id} where id = ${t.id}`;
    const child = await makeTicket(sql, ws, { projectId: project.id, parentId: t.id, title: 'Child' });
    const hiddenChild = await makeTicket(sql, ws, { projectId: hidden.id, parentId: t.id });
    const blocked = await makeTicket(sql, ws, { projectId: project.id, title: 'Blocked' });
    const blocker = await makeTicket(sql, ws, { projectId: project.id, title: 'Blocker' });
    const rel = await makeTicket(sql, ws, { projectId: project.id, title: 'Related' });
    const dupOf = await makeTicket(sql, ws, { projectId: project.id, title: 'Original' });
    const dupBy = await makeTicket(sql, ws, { projectId: project.id, title: 'Copy' });
    const hiddenRel = await makeTicket(sql, ws, { projectId: hidden.id });
    const l1 = await makeLink(sql, ws, { sourceId: t.id, targetId: blocked.id, kind: 'blocks' });
    const l2 = await makeLink(sql, ws, { sourceId: blocker.id, targetId: t.id, kind: 'blocks' });
    const l3 = await makeLink(sql, ws, { sourceId: rel.id, targetId: t.id, kind: 'relates' });
    const l4 = await makeLink(sql, ws, { sourceId: t.id, targetId: dupOf.id, kind: 'duplicates' });
    const l5 = await makeLink(sql, ws, { sourceId: dupBy.id, targetId: t.id, kind: 'duplicates' });
    await makeLink(sql, ws, { sourceId: t.id, targetId: hiddenRel.id, kind: 'relates' });
    await recordEvent(
      sql,
      {
        workspaceId: ws.id,
        ticketId: t.id,
        kind: 'link_added',
        actorId: owner.id,
        payload: { linkId: l1.id, kind: 'blocks', direction: 'outgoing', otherId: blocked.id },
      },
      new Date(),
    );
    await recordEvent(
      sql,
      {
        workspaceId: ws.id,
        ticketId: t.id,
        kind: 'link_added',
        actorId: owner.id,
        payload: { linkId: l1.id, kind: 'relates', direction: 'outgoing', otherId: hiddenRel.id },
      },
      new Date(),
    );

    const { body } = await page(t.humanId, memberToken);
    const ref = (x: { id: string; humanId: string }, title: string) => ({
      id: x.id,
      humanId: x.humanId,
      title,
      state: { id: expect.any(String), key: 'todo', name: 'Todo', category: 'open' },
    });
    expect(body.parentId).toBe(parent.id);
    expect(body.links.parent).toEqual(ref(parent, 'Parent'));
    expect(body.links.children).toEqual([ref(child, 'Child')]);
    expect(body.links.blocks).toEqual([{ ...ref(blocked, 'Blocked'), linkId: l1.id }]);
    expect(body.links.blockedBy).toEqual([{ ...ref(blocker, 'Blocker'), linkId: l2.id }]);
    expect(body.links.relates).toEqual([{ ...ref(rel, 'Related'), linkId: l3.id }]);
    expect(body.links.duplicates).toEqual([
      { ...ref(dupOf, 'Original'), linkId: l4.id, direction: 'outgoing' },
      { ...ref(dupBy, 'Copy'), linkId: l5.id, direction: 'incoming' },
    ]);
    expect(body.events.filter((e: { kind: string }) => e.kind === 'link_added')).toHaveLength(1);

    const asOwner = (await page(t.humanId, ownerToken)).body;
    expect(asOwner.links.children.map((c: { id: string }) => c.id)).toEqual([child.id, hiddenChild.id]);
    expect(asOwner.links.relates).toHaveLength(2);
    expect(asOwner.events.filter((e: { kind: string }) => e.kind === 'link_added')).toHaveLength(2);
  });

  it('hides a parent the caller cannot see (parentId null, links.parent null)', async () => {
    const sql = app.db.sql;
    const hidden = await makeProject(sql, ws);
    const parent = await makeTicket(sql, ws, { projectId: hidden.id });
    const t = await makeTicket(sql, ws, { projectId: project.id, parentId: parent.id });
    const asMember = (await page(t.humanId, memberToken)).body;
    expect(asMember.parentId).toBeNull();
    expect(asMember.links.parent).toBeNull();
    expect((await page(t.humanId, ownerToken)).body.parentId).toBe(parent.id);
  });

  it('rolls estimates up over visible leaf descendants, recursively', async () => {
    const sql = app.db.sql;
    const hidden = await makeProject(sql, ws);
    const root = await makeTicket(sql, ws, { projectId: project.id, estimateMinutes: 999 });
    const a = await makeTicket(sql, ws, { projectId: project.id, parentId: root.id, estimateMinutes: 500 });
    await makeTicket(sql, ws, { projectId: project.id, parentId: a.id, estimateMinutes: 30 });
    await makeTicket(sql, ws, { projectId: project.id, parentId: a.id, estimateMinutes: 45 });
    await makeTicket(sql, ws, { projectId: project.id, parentId: root.id, estimateMinutes: 60 });
    await makeTicket(sql, ws, { projectId: project.id, parentId: root.id, estimateMinutes: null });
    await makeTicket(sql, ws, { projectId: hidden.id, parentId: root.id, estimateMinutes: 1000 });

    expect((await page(root.humanId, memberToken)).body.billing.rollupEstimateMinutes).toBe(30 + 45 + 60);
    expect((await page(root.humanId, ownerToken)).body.billing.rollupEstimateMinutes).toBe(30 + 45 + 60 + 1000);
    expect((await page(a.humanId, ownerToken)).body.billing.rollupEstimateMinutes).toBe(75);
  });

  it('inherits the effective billing policy and mode: ticket, then project, then client', async () => {
    const sql = app.db.sql;
    const c = await makeClient(sql, ws);
    await sql`update clients set billing_policy = 'free', billing_mode = 'on_close' where id = ${c.id}`;
    const p = await makeProject(sql, ws, { billingClientId: c.id });
    const fromClient = await makeTicket(sql, ws, { projectId: p.id });
    expect((await page(fromClient.humanId, ownerToken)).body.billing).toMatchObject({
      billingPolicy: null,
      effectiveBillingPolicy: 'free',
      billingMode: null,
      effectiveBillingMode: 'on_close',
    });
    await sql`update projects set billing_policy = 'paid', billing_mode = 'period' where id = ${p.id}`;
    expect((await page(fromClient.humanId, ownerToken)).body.billing).toMatchObject({ effectiveBillingPolicy: 'paid', effectiveBillingMode: 'period' });
    const bank = (await makeBank(sql, ws, { clientId: (await makeClient(sql, ws)).id })).id;
    await sql`update tickets set billing_policy = ${`bank:${bank}`} where id = ${fromClient.id}`;
    expect((await page(fromClient.humanId, ownerToken)).body.billing.effectiveBillingPolicy).toBe(`bank:${bank}`);
  });
});

describe('GET /tickets/{ref}: references', () => {
  it('resolves the human id (any case), the UUID, an old number after a move, and a renamed prefix', async () => {
    const sql = app.db.sql;
    const t = await makeTicket(sql, ws, { projectId: project.id, title: 'Movable' });
    expect((await page(t.humanId.toLowerCase(), ownerToken)).body.id).toBe(t.id);
    expect((await page(t.id, ownerToken)).body.id).toBe(t.id);
    expect((await page(t.id.toUpperCase(), ownerToken)).body.id).toBe(t.id);

    // an old number it had in this project, and an old prefix of the project
    await sql`insert into ticket_refs (workspace_id, project_id, number, ticket_id) values (${ws.id}, ${project.id}, 9000, ${t.id})`;
    await sql`insert into project_prefixes (workspace_id, prefix, project_id) values (${ws.id}, 'OLDKEY', ${project.id})`;
    expect((await page(`${project.key}-9000`, ownerToken)).body.id).toBe(t.id);
    expect((await page(`OLDKEY-${t.number}`, ownerToken)).body.id).toBe(t.id);
    expect((await page(`oldkey-9000`, ownerToken)).body.humanId).toBe(t.humanId);
  });

  it('resolves Inbox tickets as INBOX-n for callers who may see the Inbox', async () => {
    const t = await makeTicket(app.db.sql, ws, { title: 'In the inbox' });
    const res = await page(t.humanId, ownerToken);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ humanId: t.humanId, project: null, queue: 'inbox' });
  });

  it('404 not_found for unknown refs, garbage, and tickets of another workspace', async () => {
    const sql = app.db.sql;
    const ws2 = await makeWorkspace(sql);
    const p2 = await makeProject(sql, ws2, { key: project.key });
    const foreign = await makeTicket(sql, ws2, { projectId: p2.id });
    for (const ref of [`${project.key}-99999`, 'NOPE-1', 'not a ref', '00000000-0000-0000-0000-000000000000', foreign.id]) {
      const res = await page(ref, ownerToken);
      expect(res.status, ref).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
  });

  it('400 invalid for a ref over 60 characters', async () => {
    const res = await page('A'.repeat(61), ownerToken);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid', details: { reason: 'ref_too_long' } });
    expect((await page('A'.repeat(60), ownerToken)).status).toBe(404);
  });

  it('401 without a credential and 403 for a token without read', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: project.id });
    expect((await app.call('GET', `/api/w/${ws.slug}/tickets/${t.humanId}`)).status).toBe(401);
    const writeOnly = (await makeToken(app.db.sql, ws, owner, { scopes: ['write'] })).token;
    const res = await page(t.humanId, writeOnly);
    expect(res.status).toBe(403);
    expect(res.body.error.details).toMatchObject({ reason: 'missing_scope', scope: 'read' });
  });

  it('works from a browser session too', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: project.id });
    const session = await login(app, member.email, member.password);
    const res = await app.call('GET', `/api/w/${ws.slug}/tickets/${t.humanId}`, { session });
    expect(res.status).toBe(200);
    expect(res.body.permissions.edit).toBe(true);
  });
});

describe('GET /tickets/{ref}: ETag', () => {
  it('carries a strong ETag and answers 304 to a matching If-None-Match until the ticket changes', async () => {
    const sql = app.db.sql;
    const t = await makeTicket(sql, ws, { projectId: project.id });
    const first = await page(t.humanId, ownerToken);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[^"]+"$/);
    expect((await page(t.id, memberToken)).headers.get('etag')).toBe(etag);

    const cached = await page(t.humanId, ownerToken, { 'if-none-match': etag });
    expect(cached.status).toBe(304);
    expect(cached.body).toBe('');
    expect(cached.headers.get('etag')).toBe(etag);
    expect((await page(t.humanId, ownerToken, { 'if-none-match': `"other", W/${etag}` })).status).toBe(304);
    expect((await page(t.humanId, ownerToken, { 'if-none-match': '"other"' })).status).toBe(200);

    // two changes within the same millisecond still give two versions
    const frozen = new Date();
    await recordEvent(sql, { workspaceId: ws.id, ticketId: t.id, kind: 'field_changed', actorId: owner.id, payload: { field: 'title' } }, frozen);
    const second = await page(t.humanId, ownerToken, { 'if-none-match': etag });
    expect(second.status).toBe(200);
    const etag2 = second.headers.get('etag')!;
    expect(etag2).not.toBe(etag);
    await recordEvent(sql, { workspaceId: ws.id, ticketId: t.id, kind: 'field_changed', actorId: owner.id, payload: { field: 'title' } }, frozen);
    const third = await page(t.humanId, ownerToken, { 'if-none-match': etag2 });
    expect(third.status).toBe(200);
    expect(third.headers.get('etag')).not.toBe(etag2);
  });

  it('never answers 304 for a ticket the caller cannot see', async () => {
    const sql = app.db.sql;
    const hidden = await makeProject(sql, ws);
    const t = await makeTicket(sql, ws, { projectId: hidden.id });
    const etag = (await page(t.humanId, ownerToken)).headers.get('etag')!;
    const res = await page(t.humanId, memberToken, { 'if-none-match': etag });
    expect(res.status).toBe(404);
    expect((await page(t.humanId, memberToken, { 'if-none-match': '*' })).status).toBe(404);
  });
});
