import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makeClient, makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

let app: TestApp;
let ws: Workspace;
let projectId: string;
let p: Record<
  'owner' | 'member' | 'limited' | 'outsider' | 'agent' | 'reporter' | 'colleague' | 'elevated' | 'partnerElevated' | 'partner' | 'stranger',
  Person
>;
let s: Record<'member' | 'outsider' | 'reporter', SessionCookie>;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  const [a, b, c] = [await makeClient(sql, ws, { name: 'Acme' }), await makeClient(sql, ws, { name: 'Partner' }), await makeClient(sql, ws, { name: 'Other' })];
  p = {
    owner: await makeUser(sql, ws, { role: 'owner', name: 'Olga Owner' }),
    member: await makeUser(sql, ws, { role: 'member', name: 'Max Member' }),
    limited: await makeUser(sql, ws, { role: 'member', name: 'Lea Limited' }),
    outsider: await makeUser(sql, ws, { role: 'member', name: 'Otto Outsider' }),
    agent: await makeUser(sql, ws, { role: 'agent', name: 'Bot' }),
    reporter: await makeUser(sql, ws, { role: 'client', clientId: a.id, name: 'Rita Reporter' }),
    colleague: await makeUser(sql, ws, { role: 'client', clientId: a.id, name: 'Carl Colleague' }),
    elevated: await makeUser(sql, ws, { role: 'client_elevated', clientId: a.id, name: 'Eve Elevated' }),
    partnerElevated: await makeUser(sql, ws, { role: 'client_elevated', clientId: b.id, name: 'Pia Partner' }),
    partner: await makeUser(sql, ws, { role: 'client', clientId: b.id, name: 'Paul Partner' }),
    stranger: await makeUser(sql, ws, { role: 'client', clientId: c.id, name: 'Sam Stranger' }),
  };
  projectId = (
    await makeProject(sql, ws, { billingClientId: a.id, collaboratorIds: [b.id], members: [{ person: p.member }, { person: p.limited, access: 'limited' }] })
  ).id;
  s = {
    member: await login(app, p.member.email, p.member.password),
    outsider: await login(app, p.outsider.email, p.outsider.password),
    reporter: await login(app, p.reporter.email, p.reporter.password),
  };
});
afterAll(() => app.close());

const preview = (ref: string, body: unknown, session: SessionCookie = s.member) =>
  app.call('POST', `/api/w/${ws.slug}/tickets/${ref}/visibility`, { session, body });
const ticket = () => makeTicket(app.db.sql, ws, { projectId, reporterId: p.reporter.id });

describe('POST /tickets/{ref}/visibility', () => {
  it('client audience: workspace users who see the ticket, the client people who read it, who gains access, who is refused', async () => {
    const t = await ticket();
    const res = await preview(t.humanId, {
      audience: 'client',
      mentions: [p.colleague.id, p.partner.id, p.stranger.id, p.member.id, p.reporter.id, p.outsider.id],
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      audience: 'client',
      workspaceUsers: 3, // owner, member, limited member
      clientPeople: [
        { identityId: p.elevated.id, name: 'Eve Elevated', clientName: 'Acme' },
        { identityId: p.partnerElevated.id, name: 'Pia Partner', clientName: 'Partner' },
        { identityId: p.reporter.id, name: 'Rita Reporter', clientName: 'Acme' },
      ],
      willGainAccess: [
        { identityId: p.colleague.id, name: 'Carl Colleague', clientName: 'Acme' },
        { identityId: p.partner.id, name: 'Paul Partner', clientName: 'Partner' },
      ],
      denied: [{ identityId: p.stranger.id, name: 'Sam Stranger' }],
    });
    // a preview changes nothing
    const [n] = await app.db.sql<{ n: number }[]>`select count(*)::int as n from ticket_viewers where ticket_id = ${t.id}`;
    expect(n!.n).toBe(0);
  });

  it('internal audience: no client people, and every mentioned client person is denied', async () => {
    const t = await ticket();
    const res = await preview(t.humanId, { audience: 'internal', mentions: [p.colleague.id, p.member.id, p.reporter.id] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      audience: 'internal',
      workspaceUsers: 3,
      clientPeople: [],
      willGainAccess: [],
      denied: [
        { identityId: p.colleague.id, name: 'Carl Colleague' },
        { identityId: p.reporter.id, name: 'Rita Reporter' },
      ],
    });
  });

  it('counts viewers among the workspace users, and every workspace user on an Inbox ticket', async () => {
    const t = await ticket();
    await app.db.sql`insert into ticket_viewers (ticket_id, identity_id) values (${t.id}, ${p.outsider.id}), (${t.id}, ${p.colleague.id})`;
    const res = await preview(t.humanId, { audience: 'client', mentions: [p.colleague.id] });
    expect(res.body.workspaceUsers).toBe(4);
    expect(res.body.clientPeople.map((x: any) => x.name)).toContain('Carl Colleague');
    expect(res.body.willGainAccess).toEqual([]);
    const inbox = await makeTicket(app.db.sql, ws, { projectId: null });
    const owner = await login(app, p.owner.email, p.owner.password);
    const r = await preview(inbox.humanId, { audience: 'internal' }, owner);
    expect(r.status).toBe(200);
    expect(r.body.workspaceUsers).toBe(5); // owner, member, limited, outsider, agent
  });

  it('a client user previews the client audience; internal is 403 audience_forbidden', async () => {
    const t = await ticket();
    const ok = await preview(t.humanId, { audience: 'client', mentions: [p.colleague.id] }, s.reporter);
    expect(ok.status).toBe(200);
    expect(ok.body.willGainAccess.map((x: any) => x.identityId)).toEqual([p.colleague.id]);
    const res = await preview(t.humanId, { audience: 'internal', mentions: [] }, s.reporter);
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'audience_forbidden' } });
  });

  it('404 unknown_person with identityId for a mention that is not a member', async () => {
    const t = await ticket();
    const unknown = randomUUID();
    const res = await preview(t.humanId, { audience: 'client', mentions: [p.colleague.id, unknown] });
    expect(res.status).toBe(404);
    expect(res.body.error.details).toMatchObject({ reason: 'unknown_person', identityId: unknown });
  });

  it('400 for an unknown audience and bad mentions', async () => {
    const t = await ticket();
    const many = Array.from({ length: 21 }, () => randomUUID());
    for (const body of [
      {},
      { audience: 'public' },
      { audience: 'INTERNAL' },
      { audience: 3 },
      { audience: 'client', mentions: many },
      { audience: 'client', mentions: ['x'] },
      { audience: 'client', mentions: 'x' },
    ]) {
      const res = await preview(t.humanId, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid');
    }
  });

  it('403 session_required for a token; 404 for a ticket the caller cannot see', async () => {
    const t = await ticket();
    const token = (await makeToken(app.db.sql, ws, p.member)).token;
    const res = await app.call('POST', `/api/w/${ws.slug}/tickets/${t.humanId}/visibility`, { token, body: { audience: 'internal' } });
    expect(res.status).toBe(403);
    expect(res.body.error.details.reason).toBe('session_required');
    const hidden = await preview(t.humanId, { audience: 'internal' }, s.outsider);
    expect(hidden.status).toBe(404);
    expect(hidden.body.error.code).toBe('not_found');
  });
});
