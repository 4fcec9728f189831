import { randomBytes, randomUUID } from 'node:crypto';
import type { Role, Scope } from '../../src/core/auth/principal.ts';
import { login, startTestApp, type SessionCookie, type TestApp } from '../helpers/app.ts';
import {
  makeBillingRun,
  makeClient,
  makeComment,
  makeDocument,
  makePeriod,
  makeProject,
  makeTicket,
  makeToken,
  makeUser,
  makeWorkspace,
  type Person,
  type Workspace,
} from '../helpers/factories.ts';

/**
 * A workspace with a person of every role, a project everybody sees (PA, billed to client A, with
 * the member and the agent as full members), a project only Owner and Admin see (PH, billed to
 * client B), an Inbox ticket, and objects hidden from some callers, each carrying a unique
 * `SECRET-<uuid>` marker or recorded by id, so that a response can be scanned for what its caller
 * may not see. Content is written through the API as the owner, so timelines hold real events.
 */

export type CredKind = 'session' | 'token' | 'agent' | 'none';

export interface Cred {
  name: string;
  role: Role | 'anonymous';
  kind: CredKind;
  scopes: Scope[];
  allowList: boolean;
  person: Person | null;
  token?: string;
  session?: SessionCookie;
}

/** Who may see a hidden object. */
export type Audience = (c: Cred) => boolean;

const ADMINS = new Set<string>(['owner', 'admin']);
const STAFF = new Set<string>(['owner', 'admin', 'member', 'agent']);
export const isStaff: Audience = (c) => STAFF.has(c.role);
export const isAdmin: Audience = (c) => ADMINS.has(c.role);
export const isClient: Audience = (c) => c.role === 'client' || c.role === 'client_elevated';
/** Project PH: Owner and Admin, unless the token is restricted to PA. */
export const seesHiddenProject: Audience = (c) => isAdmin(c) && !c.allowList;
/** The Inbox: workspace users by session or with a triage token that has no allow-list. */
export const seesInbox: Audience = (c) => isStaff(c) && !c.allowList && (c.kind === 'session' || c.scopes.includes('triage'));

export interface Marker {
  /** A substring that must not appear, or a human id matched as a whole word. */
  text: string;
  what: string;
  seenBy: Audience;
  word?: boolean;
}

export interface SendOptions {
  query?: string;
  body?: unknown;
  form?: FormData;
  headers?: Record<string, string>;
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export interface AuthzWorld {
  app: TestApp;
  ws: Workspace;
  people: Record<'owner' | 'admin' | 'member' | 'agent' | 'elevated' | 'client', Person>;
  clients: { a: string; b: string };
  projects: { a: { id: string; key: string }; h: { id: string; key: string } };
  tickets: Record<'visA' | 'visB' | 'hidden' | 'inbox' | 'moved', { id: string; humanId: string }>;
  comments: { visClient: string; visInternal: string; hiddenClient: string };
  attachments: { visClient: string; visInternal: string; hidden: string };
  entries: { ownerOnVisA: string; ownerOnHidden: string; memberOnMoved: string };
  codehost: { hidden: string };
  documents: { hiddenCombined: string };
  states: { default: string };
  ownerSession: SessionCookie;
  ownerToken: string;
  markers: Marker[];
  creds: Cred[];
  /** Sends a request as `cred` to a path (workspace paths start with /api/w/<slug>). */
  send: (cred: Cred | null, method: string, path: string, opts?: SendOptions) => Promise<Reply>;
  /** A new ticket of a visibility class, for probes that change or delete their target. */
  fresh: (where: 'visible' | 'hidden' | 'inbox') => Promise<{ id: string; humanId: string }>;
  /** Hidden markers a response to `cred` must not contain. */
  leaks: (cred: Cred, text: string) => string[];
  today: string;
}

const secret = () => `SECRET-${randomUUID()}`;
const hex = () => randomBytes(3).toString('hex');

export async function authzWorld(opts: { withCreds?: boolean } = {}): Promise<AuthzWorld> {
  const app = await startTestApp();
  const sql = app.db.sql;
  const ws = await makeWorkspace(sql);
  const a = (await makeClient(sql, ws, { name: 'Client A' })).id;
  const b = (await makeClient(sql, ws, { name: 'Client B' })).id;
  const people = {
    owner: await makeUser(sql, ws, { role: 'owner' }),
    admin: await makeUser(sql, ws, { role: 'admin' }),
    member: await makeUser(sql, ws, { role: 'member' }),
    agent: await makeUser(sql, ws, { role: 'agent' }),
    elevated: await makeUser(sql, ws, { role: 'client_elevated', clientId: a }),
    client: await makeUser(sql, ws, { role: 'client', clientId: a }),
  };
  const pa = await makeProject(sql, ws, {
    key: `PA${hex().toUpperCase()}`.slice(0, 6),
    billingClientId: a,
    members: [
      { person: people.member, access: 'full' },
      { person: people.agent, access: 'full' },
    ],
  });
  const ph = await makeProject(sql, ws, { key: `HX${hex().toUpperCase()}`.slice(0, 6), billingClientId: b });
  const markers: Marker[] = [];
  const hide = (text: string, what: string, seenBy: Audience, word = false) => markers.push({ text, what, seenBy, word });

  const old = new Date('2001-01-01T00:00:00Z');
  const hiddenTitle = secret();
  const inboxTitle = secret();
  const tickets = {
    visA: await makeTicket(sql, ws, { projectId: pa.id, title: 'Visible A', reporterId: people.client.id }),
    visB: await makeTicket(sql, ws, { projectId: pa.id, title: 'Visible B', reporterId: people.client.id }),
    hidden: await makeTicket(sql, ws, { projectId: ph.id, title: hiddenTitle, description: secret() }),
    inbox: await makeTicket(sql, ws, { projectId: null, title: inboxTitle, description: secret() }),
    moved: await makeTicket(sql, ws, { projectId: pa.id, title: 'Soon moved' }),
  };
  hide(tickets.hidden.id, 'hidden ticket id', seesHiddenProject);
  hide(tickets.hidden.humanId, 'hidden ticket human id', seesHiddenProject, true);
  hide(hiddenTitle, 'hidden ticket title', seesHiddenProject);
  hide(tickets.inbox.id, 'inbox ticket id', seesInbox);
  hide(tickets.inbox.humanId, 'inbox ticket human id', seesInbox, true);
  hide(inboxTitle, 'inbox ticket title', seesInbox);
  const [desc] = await sql<{ h: string; i: string }[]>`
    select (select description from tickets where id = ${tickets.hidden.id}) as h, (select description from tickets where id = ${tickets.inbox.id}) as i`;
  hide(desc!.h, 'hidden ticket description', seesHiddenProject);
  hide(desc!.i, 'inbox ticket description', seesInbox);

  const ownerSession = await login(app, people.owner.email, people.owner.password);
  const ownerToken = (await makeToken(sql, ws, people.owner)).token;

  const send = async (cred: Cred | null, method: string, path: string, o: SendOptions = {}): Promise<Reply> => {
    const headers: Record<string, string> = { ...o.headers };
    if (cred?.token) headers.authorization = `Bearer ${cred.token}`;
    if (cred?.session) {
      headers.cookie = cred.session.cookie;
      if (!['GET', 'HEAD'].includes(method)) headers['x-csrf-token'] ??= cred.session.csrfToken;
    }
    let body: BodyInit | undefined = o.form;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(app.base + path + (o.query ? `?${o.query}` : ''), { method, headers, body });
    const text = await res.text();
    let json: unknown = undefined;
    if ((res.headers.get('content-type') ?? '').includes('json') && text) {
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
    }
    return { status: res.status, headers: res.headers, text, json };
  };
  const owner: Cred = { name: 'owner setup', role: 'owner', kind: 'session', scopes: [], allowList: false, person: people.owner, session: ownerSession };
  const W = `/api/w/${ws.slug}`;
  const must = async (method: string, path: string, o: SendOptions, status: number) => {
    const r = await send(owner, method, W + path, o);
    if (r.status !== status) throw new Error(`world setup ${method} ${path}: ${r.status} ${r.text}`);
    return r.json;
  };
  const comment = async (ref: string, body: string, audience: 'internal' | 'client') =>
    ((await must('POST', `/tickets/${ref}/comments`, { body: { body, audience } }, 201)) as { id: string }).id;
  const upload = async (ref: string, filename: string, audience: 'internal' | 'client') => {
    const form = new FormData();
    form.set('audience', audience);
    form.set('file', new Blob(['hello']), filename);
    return ((await must('POST', `/tickets/${ref}/attachments`, { form }, 201)) as { id: string }).id;
  };

  // Comments: an internal one on a visible ticket (hidden from clients), both audiences on the hidden ticket.
  const internalBody = secret();
  const comments = {
    visClient: await comment(tickets.visA.id, 'A note everybody on the ticket may read', 'client'),
    visInternal: await comment(tickets.visA.id, internalBody, 'internal'),
    hiddenClient: await comment(tickets.hidden.id, secret(), 'client'),
  };
  hide(internalBody, 'internal comment body', isStaff);
  hide(comments.visInternal, 'internal comment id', isStaff);
  hide(comments.hiddenClient, 'comment id on the hidden ticket', seesHiddenProject);
  const hiddenInternal = await comment(tickets.hidden.id, secret(), 'internal');
  hide(hiddenInternal, 'internal comment id on the hidden ticket', seesHiddenProject);
  await makeComment(sql, ws, { ticketId: tickets.inbox.id, body: secret(), audience: 'client' });

  // Attachments: client and internal on visA, one on the hidden ticket; filenames are markers.
  const visInternalName = `${secret()}.txt`;
  const hiddenName = `${secret()}.txt`;
  const attachments = {
    visClient: await upload(tickets.visA.id, 'public.txt', 'client'),
    visInternal: await upload(tickets.visA.id, visInternalName, 'internal'),
    hidden: await upload(tickets.hidden.id, hiddenName, 'client'),
  };
  hide(visInternalName, 'internal attachment filename', isStaff);
  hide(attachments.visInternal, 'internal attachment id', isStaff);
  hide(hiddenName, 'hidden ticket attachment filename', seesHiddenProject);
  hide(attachments.hidden, 'hidden ticket attachment id', seesHiddenProject);

  // Billing text on a visible ticket: clients never see billing fields or their events.
  const billingText = secret();
  await must('PATCH', `/tickets/${tickets.visA.id}`, { body: { billingDescription: billingText } }, 200);
  hide(billingText, 'billingDescription', isStaff);

  // Relations from visible tickets to the hidden one: a link (events on both) and a parent.
  await must('POST', `/tickets/${tickets.visA.id}/links`, { body: { targetId: tickets.hidden.id, kind: 'relates' } }, 201);
  await must('PUT', `/tickets/${tickets.visB.id}/parent`, { body: { parentId: tickets.hidden.id } }, 200);

  // A code-host reference on the hidden ticket.
  const repo = `secret-${hex()}/repo${hex()}`;
  const ch = await must('POST', `/tickets/${tickets.hidden.id}/codehost`, { body: { repo, url: `https://github.com/${repo}/pull/7`, pr: 7 } }, 201);
  hide(repo, 'hidden code-host repo', seesHiddenProject);
  hide((ch as { id: string }).id, 'hidden code-host link id', seesHiddenProject);

  // Time: the owner's entries (notes are staff-only), and a member's entry on a ticket that then
  // moves to PH and is renamed: the member keeps the entry but must not learn the new name or id.
  const today = new Date().toISOString().slice(0, 10);
  const noteA = secret();
  const noteH = secret();
  const ownerOnVisA = (await must('POST', '/time', { body: { ticketId: tickets.visA.id, spentOn: today, minutes: 30, note: noteA } }, 201)) as { id: string };
  const ownerOnHidden = (await must('POST', '/time', { body: { ticketId: tickets.hidden.id, spentOn: today, minutes: 45, note: noteH } }, 201)) as {
    id: string;
  };
  hide(noteA, 'time note', isStaff);
  hide(ownerOnVisA.id, 'time entry id', isStaff);
  hide(noteH, 'time note on the hidden ticket', seesHiddenProject);
  hide(ownerOnHidden.id, 'time entry id on the hidden ticket', seesHiddenProject);
  const memberSession = await login(app, people.member.email, people.member.password);
  const memberCred: Cred = { ...owner, name: 'member setup', role: 'member', person: people.member, session: memberSession };
  const mr = await send(memberCred, 'POST', `${W}/time`, { body: { ticketId: tickets.moved.id, spentOn: today, minutes: 15, note: 'my own work' } });
  if (mr.status !== 201) throw new Error(`world setup member time: ${mr.status} ${mr.text}`);
  await send(memberCred, 'POST', '/api/auth/logout');
  const movedTitle = secret();
  await must('POST', `/tickets/${tickets.moved.id}/move`, { body: { projectId: ph.id, confirmReset: true } }, 200);
  const movedPage = (await must('PATCH', `/tickets/${tickets.moved.id}`, { body: { title: movedTitle } }, 200)) as { humanId: string };
  hide(movedTitle, 'title of a ticket moved out of sight', seesHiddenProject);
  hide(movedPage.humanId, 'human id of a ticket moved out of sight', seesHiddenProject, true);
  hide(ph.key, 'key of the hidden project', seesHiddenProject, true);

  // A combined document of client B: only Owner and Admin (without an allow-list) may see it.
  const period = await makePeriod(sql, ws, { start: '2001-01-01', end: '2001-01-31', closed: true, closedBy: people.owner.id });
  const run = await makeBillingRun(sql, ws, { periodId: period.id });
  const docNumber = secret();
  const doc = await makeDocument(sql, ws, { runId: run.id, clientId: b, number: docNumber });
  hide(docNumber, 'document number', seesHiddenProject);
  hide(doc.id, 'document id', seesHiddenProject);

  // Events: of the hidden ticket, and on visible tickets those naming the hidden ticket or
  // internal/billing/time facts.
  const events = await sql<{ id: string; ticket_id: string; kind: string; payload: string }[]>`
    select id, ticket_id, kind, payload::text as payload from ticket_events where workspace_id = ${ws.id}`;
  for (const e of events) {
    if (e.ticket_id === tickets.hidden.id || e.ticket_id === tickets.inbox.id)
      hide(e.id, `${e.kind} event of a hidden ticket`, e.ticket_id === tickets.inbox.id ? seesInbox : seesHiddenProject);
    else if (e.payload.includes(tickets.hidden.id)) hide(e.id, `${e.kind} event naming the hidden ticket`, seesHiddenProject);
    else if (
      e.kind.startsWith('time_') ||
      e.payload.includes(comments.visInternal) ||
      e.payload.includes(attachments.visInternal) ||
      e.payload.includes('billingDescription')
    )
      hide(e.id, `${e.kind} event (staff only)`, isStaff);
  }
  const [st] = await sql<{ id: string }[]>`select id from workflow_states where workspace_id = ${ws.id} and is_default`;

  const fresh = async (where: 'visible' | 'hidden' | 'inbox') => {
    const t = await makeTicket(sql, ws, {
      projectId: where === 'visible' ? pa.id : where === 'hidden' ? ph.id : null,
      title: where === 'visible' ? 'Probe target' : secret(),
      reporterId: where === 'visible' ? people.client.id : null,
      updatedAt: old,
    });
    if (where !== 'visible') hide(t.id, `fresh ${where} ticket id`, where === 'hidden' ? seesHiddenProject : seesInbox);
    return t;
  };

  const leaks = (cred: Cred, text: string) =>
    markers
      .filter((m) => !m.seenBy(cred))
      .filter((m) => (m.word ? new RegExp(`(^|[^A-Za-z0-9-])${m.text}([^0-9]|$)`, 'i').test(text) : text.includes(m.text)))
      .map((m) => `${m.what} (${m.text})`);

  const world: AuthzWorld = {
    app,
    ws,
    people,
    clients: { a, b },
    projects: { a: pa, h: ph },
    tickets: { ...tickets, moved: { id: tickets.moved.id, humanId: movedPage.humanId } },
    comments,
    attachments,
    entries: { ownerOnVisA: ownerOnVisA.id, ownerOnHidden: ownerOnHidden.id, memberOnMoved: (mr.json as { id: string }).id },
    codehost: { hidden: (ch as { id: string }).id },
    documents: { hiddenCombined: doc.id },
    states: { default: st!.id },
    ownerSession,
    ownerToken,
    markers,
    creds: [],
    send,
    fresh,
    leaks,
    today,
  };
  if (opts.withCreds !== false) world.creds = await makeCreds(world);
  return world;
}

const TOKEN_SHAPES: { label: string; scopes: Scope[]; allowList: boolean }[] = [
  { label: 'read', scopes: ['read'], allowList: false },
  { label: 'read+write', scopes: ['read', 'write'], allowList: false },
  { label: 'read+write+triage', scopes: ['read', 'write', 'triage'], allowList: false },
  { label: 'allow-list [PA]', scopes: ['read', 'write', 'triage'], allowList: true },
  // minted by the factory for every role: the admin scope alone never lifts a role (issue 22)
  { label: 'read+write+triage+admin', scopes: ['read', 'write', 'triage', 'admin'], allowList: false },
];

/** Every role by browser session and by each token shape; the agent by agent tokens; and nobody. */
async function makeCreds(w: AuthzWorld): Promise<Cred[]> {
  const sql = w.app.db.sql;
  const creds: Cred[] = [{ name: 'anonymous', role: 'anonymous', kind: 'none', scopes: [], allowList: false, person: null }];
  const roles: [keyof AuthzWorld['people'], Role][] = [
    ['owner', 'owner'],
    ['admin', 'admin'],
    ['member', 'member'],
    ['agent', 'agent'],
    ['elevated', 'client_elevated'],
    ['client', 'client'],
  ];
  for (const [key, role] of roles) {
    const person = w.people[key];
    if (role !== 'agent') {
      const session = await login(w.app, person.email, person.password);
      creds.push({ name: `${role} session`, role, kind: 'session', scopes: [], allowList: false, person, session });
    }
    for (const shape of TOKEN_SHAPES) {
      const kind = role === 'agent' ? 'agent' : 'delegated';
      const { token } = await makeToken(sql, w.ws, person, {
        scopes: shape.scopes,
        projectIds: shape.allowList ? [w.projects.a.id] : null,
        kind,
        createdBy: kind === 'agent' ? w.people.owner.id : undefined,
      });
      creds.push({
        name: `${role} ${kind} token ${shape.label}`,
        role,
        kind: kind === 'agent' ? 'agent' : 'token',
        scopes: shape.scopes,
        allowList: shape.allowList,
        person,
        token,
      });
    }
  }
  return creds;
}
