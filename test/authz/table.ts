import { randomBytes } from 'node:crypto';
import { makeBank, makeBillingRun, makeComment, makeLink, makePeriod, makeTimeEntry, makeToken, makeUser } from '../helpers/factories.ts';
import { isAdmin, isClient, seesHiddenProject, seesInbox, type Audience, type AuthzWorld, type Cred, type SendOptions } from './world.ts';

/**
 * The authorization contract of every route, as data. Each route (router method + path) lists one
 * or more probes: a concrete request and the rule its status follows. The gates are applied in the
 * order the contract gives them:
 *
 *   credential (`auth`) -> client users on time routes (`workspaceOnly`) -> visibility of the
 *   ticket or object the request names (`target`, 404 never 403) -> Owner/Admin only (`admin`)
 *   -> the route's own answer for a caller who passes every gate (`ok`).
 *
 * `auth`: `public` (no credential needed), `cookie` (a browser session only, else 401), `bearer`
 * (a token only, else 401: /mcp), `read`/`write` (token scope or a session; a token without the
 * scope is 403 missing_scope), `session` (a token is 403 session_required), `admin` (a session, or a
 * token with the admin scope, else 403 missing_scope; the probe adds `admin: true` for the role).
 */
export type Gate = 'public' | 'cookie' | 'bearer' | 'read' | 'write' | 'session' | 'admin';

export interface Request extends SendOptions {
  params?: Record<string, string>;
}

export interface Probe extends Request {
  label: string;
  auth: Gate;
  workspaceOnly?: boolean;
  target?: Audience;
  admin?: boolean;
  ok: number | number[] | ((c: Cred) => number | number[]);
  /** Sent without any credential whatever the cell (logout would end the cell's session). */
  anonymous?: boolean;
  build?: (w: AuthzWorld, c: Cred) => Request | Promise<Request>;
}

export interface Expected {
  status: number[];
  reason?: string;
}

const everyone: Audience = () => true;
const visible = everyone;
const hidden = seesHiddenProject;
const inbox = seesInbox;
const uniq = () => randomBytes(4).toString('hex');

/** A new item of a workflow list that no ticket uses, for a probe that changes or deletes it. */
async function workflowItem(w: AuthzWorld, table: 'workflow_states' | 'ticket_kinds' | 'priorities' | 'labels'): Promise<string> {
  const sql = w.app.db.sql;
  const [row] =
    table === 'labels'
      ? await sql<{ id: string }[]>`insert into labels (workspace_id, name) values (${w.ws.id}, ${`probe ${uniq()}`}) returning id`
      : await sql<{ id: string }[]>`
          insert into ${sql(table)} ${sql({ workspace_id: w.ws.id, key: `probe_${uniq()}`, name: 'Probe', position: 99, ...(table === 'workflow_states' ? { category: 'open' } : {}) })}
          returning id`;
  return row!.id;
}

/** Moving and archiving a PA ticket: Owner/Admin and the full members (member, agent); client users are refused. */
const staffOnly = (status: number) => (c: Cred) => (isClient(c) ? 403 : status);
/** The Inbox needs triage on a token, no allow-list, and a workspace user. */
const inboxAccess = (status: number) => (c: Cred) => (isClient(c) || c.allowList || (c.kind !== 'session' && !c.scopes.includes('triage')) ? 403 : status);
const owner = (c: Cred) => c.role === 'owner';
/** permissions.addViewers: workspace users and elevated client users; ordinary client users are refused. */
const addViewers = (status: number) => (c: Cred) => (c.role === 'client' ? 403 : status);
/**
 * Someone else's time entry on a ticket the caller cannot see: the contract lists 403 for someone
 * else's entry and 404 for an unknown one; an entry is not a ticket, so either is accepted for
 * non-admins (neither names the ticket). Owner/Admin outside their allow-list get 404.
 */
const hiddenEntry = (status: number) => (c: Cred) => (isAdmin(c) ? (seesHiddenProject(c) ? status : 404) : [403, 404]);

const ref = (t: { humanId: string }) => ({ ref: t.humanId });
const freshRef = (where: 'visible' | 'hidden') => async (w: AuthzWorld) => ({ params: ref(await w.fresh(where)) });
const freshLink = (where: 'visible' | 'hidden', other: 'visB' | 'hidden') => async (w: AuthzWorld) => {
  const t = await w.fresh(where);
  const l = await makeLink(w.app.db.sql, w.ws, { sourceId: t.id, targetId: w.tickets[other].id, kind: 'relates' });
  return { params: { ref: t.humanId, linkId: l.id } };
};
const freshCodehost = (where: 'visible' | 'hidden') => async (w: AuthzWorld) => {
  const t = await w.fresh(where);
  const [row] = await w.app.db.sql<{ id: string }[]>`
    insert into codehost_links (workspace_id, ticket_id, repo, pr, url) values (${w.ws.id}, ${t.id}, 'acme/web', 3, 'https://github.com/acme/web/pull/3') returning id`;
  return { params: { ref: t.humanId, linkId: row!.id } };
};
const freshViewer = (where: 'visible' | 'hidden') => async (w: AuthzWorld) => {
  const t = await w.fresh(where);
  await w.app.db.sql`insert into ticket_viewers (ticket_id, identity_id) values (${t.id}, ${w.people.admin.id})`;
  return { params: { ref: t.humanId, identityId: w.people.admin.id } };
};
const freshComment = (where: 'visible' | 'hidden', audience: 'internal' | 'client') => async (w: AuthzWorld) => {
  const t = where === 'visible' ? w.tickets.visA : await w.fresh(where);
  const c = await makeComment(w.app.db.sql, w.ws, { ticketId: t.id, body: 'Probe comment', audience, authorId: w.people.owner.id });
  return { params: { ref: t.humanId, id: c.id } };
};
const freshEntry = (where: 'visible' | 'hidden') => async (w: AuthzWorld) => {
  const t = where === 'visible' ? w.tickets.visA : w.tickets.hidden;
  const e = await makeTimeEntry(w.app.db.sql, w.ws, { ticketId: t.id, userId: w.people.owner.id, spentOn: w.today, minutes: 5 });
  return { params: { id: e.id } };
};
const upload = (t: 'visA' | 'hidden') => (w: AuthzWorld) => {
  const form = new FormData();
  form.set('file', new Blob(['probe']), 'probe.txt');
  form.set('audience', 'client');
  return { params: ref(w.tickets[t]), form };
};
/** `make` run once per world (its database), not once per process: a fork runs file after file with its modules loaded (test/setup/per-file.ts). */
function perWorld<T>(make: (w: AuthzWorld) => Promise<T>): (w: AuthzWorld) => Promise<T> {
  const made = new WeakMap<AuthzWorld, Promise<T>>();
  return (w) => {
    let value = made.get(w);
    if (!value) made.set(w, (value = make(w)));
    return value;
  };
}
const reopenable = perWorld((w) => makePeriod(w.app.db.sql, w.ws, { start: '2002-01-01', end: '2002-01-31', closed: true, closedBy: w.people.owner.id }));
const oldPeriod = async (w: AuthzWorld) => ({ params: { id: (await reopenable(w)).id } });
/** A closed period of its own for the billing-run probes (the period probes reopen theirs). */
const billingPeriod = perWorld((w) => makePeriod(w.app.db.sql, w.ws, { start: '2003-01-01', end: '2003-01-31', closed: true, closedBy: w.people.owner.id }));
/** A fresh completed run over that period (a void probe voids it). */
const aRun = async (w: AuthzWorld) => ({ params: { id: (await makeBillingRun(w.app.db.sql, w.ws, { periodId: (await billingPeriod(w)).id })).id } });
/** A pending invitation of its own per cell (a resend or revoke closes or renews it). */
const anInvitation = async (w: AuthzWorld) => {
  const [row] = await w.app.db.sql<{ id: string }[]>`
    insert into invitations (workspace_id, email, name, role, invited_by, expires_at)
    values (${w.ws.id}, ${`invitee-${uniq()}@example.test`}, 'Invitee', 'member', ${w.people.owner.id}, now() + interval '7 days') returning id`;
  return { params: { id: row!.id } };
};
/** A member of its own per cell: deactivating one of the world's people would change every later cell. */
const aMember = async (w: AuthzWorld) => ({ params: { identityId: (await makeUser(w.app.db.sql, w.ws, { role: 'member' })).id } });
/** A client, a project with one member, a category of its own per cell (issue 22: the probe archives, empties or deletes it). */
const aClient = async (w: AuthzWorld) =>
  (
    await w.app.db.sql<
      { id: string }[]
    >`insert into clients (workspace_id, name, code) values (${w.ws.id}, 'Probe', ${`P${uniq().toUpperCase()}`}) returning id`
  )[0]!.id;
const aProject = async (w: AuthzWorld, memberId: string) => {
  const key = `Q${uniq().toUpperCase()}`;
  const [p] = await w.app.db.sql<{ id: string }[]>`insert into projects (workspace_id, key, name) values (${w.ws.id}, ${key}, 'Probe') returning id`;
  await w.app.db.sql`insert into project_prefixes (workspace_id, prefix, project_id) values (${w.ws.id}, ${key}, ${p!.id})`;
  await w.app.db.sql`insert into project_memberships (project_id, identity_id, workspace_id, access) values (${p!.id}, ${memberId}, ${w.ws.id}, 'full')`;
  return p!.id;
};
const aCategory = async (w: AuthzWorld) =>
  (await w.app.db.sql<{ id: string }[]>`insert into consultant_categories (workspace_id, name) values (${w.ws.id}, ${`Probe ${uniq()}`}) returning id`)[0]!.id;
const MCP_INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'authz-matrix', version: '1' } },
};
const MCP_HEADERS = { accept: 'application/json, text/event-stream' };

/** Every route of the app, by `METHOD /router/path`. A route missing here fails the matrix. */
export const TABLE: Record<string, Probe[]> = {
  'GET /': [{ label: 'anyone', auth: 'public', ok: 200 }],
  'GET /healthz': [{ label: 'anyone', auth: 'public', ok: 200 }],
  'GET /api/openapi.json': [{ label: 'anyone', auth: 'public', ok: 200 }],
  'GET /api/docs': [{ label: 'anyone', auth: 'public', ok: 200 }],
  'GET /api/docs/:asset': [{ label: 'the start script', auth: 'public', ok: 200, params: { asset: 'start.js' } }],
  'GET /readyz': [{ label: 'anyone', auth: 'public', ok: 200 }],
  'GET /.well-known/oauth-protected-resource': [{ label: 'anyone', auth: 'public', ok: 200 }],
  'GET /.well-known/oauth-protected-resource/mcp': [{ label: 'anyone', auth: 'public', ok: 200 }],
  'POST /api/auth/login': [{ label: 'empty body', auth: 'public', anonymous: true, body: {}, ok: 400 }],
  'POST /api/auth/reauth': [{ label: 'right password', auth: 'cookie', ok: 200, build: (_w, c) => ({ body: { password: c.person?.password ?? 'x' } }) }],
  'POST /api/auth/logout': [{ label: 'without a session', auth: 'public', anonymous: true, ok: 200 }],
  'GET /api/auth/session': [{ label: 'who am I', auth: 'cookie', ok: 200 }],
  'GET /api/auth/invitations/:token': [{ label: 'an unknown link', auth: 'public', ok: 404, params: { token: 'nope' } }],
  'POST /api/auth/invitations/:token/accept': [
    { label: 'an unknown link', auth: 'public', anonymous: true, ok: 404, params: { token: 'nope' }, body: { password: 'long enough secret' } },
  ],
  // an empty body: a valid one counts against the reset throttle of the matrix's one address
  'POST /api/auth/password-reset': [{ label: 'empty body', auth: 'public', anonymous: true, body: {}, ok: 400 }],
  'POST /api/auth/password-reset/:token': [
    { label: 'an unknown link', auth: 'public', anonymous: true, ok: 404, params: { token: 'nope' }, body: { password: 'long enough secret' } },
  ],
  'POST /mcp': [{ label: 'initialize', auth: 'bearer', ok: 200, body: MCP_INIT, headers: MCP_HEADERS }],
  // Accepting only JSON: an SSE accept would open a stream that stays open.
  // stateless: no stream to open, no session to end; 405 for every caller, before authentication
  'GET /mcp': [{ label: 'no event stream (stateless)', auth: 'public', ok: 405, headers: { accept: 'text/event-stream' } }],
  'DELETE /mcp': [{ label: 'no session to end (stateless)', auth: 'public', ok: 405, headers: MCP_HEADERS }],

  'GET /api/w/:slug/workflow': [{ label: 'workflow', auth: 'read', ok: 200 }],
  // issue 22: the workflow's lists; each delete removes an item made for the cell, nobody uses it (no moveTo needed)
  'POST /api/w/:slug/workflow/states': [
    { label: 'a new state', auth: 'admin', admin: true, ok: 201, build: () => ({ body: { key: `probe_${uniq()}`, name: 'Probe', category: 'open' } }) },
  ],
  'PUT /api/w/:slug/workflow/states/:id': [
    {
      label: 'the default state, renamed as it is',
      auth: 'admin',
      admin: true,
      ok: 200,
      build: (w) => ({ params: { id: w.states.default }, body: { name: 'Todo' } }),
    },
  ],
  'DELETE /api/w/:slug/workflow/states/:id': [
    { label: 'an unused state', auth: 'admin', admin: true, ok: 200, build: async (w) => ({ params: { id: await workflowItem(w, 'workflow_states') } }) },
  ],
  'POST /api/w/:slug/workflow/kinds': [
    { label: 'a new kind', auth: 'admin', admin: true, ok: 201, build: () => ({ body: { key: `probe_${uniq()}`, name: 'Probe' } }) },
  ],
  'PUT /api/w/:slug/workflow/kinds/:id': [
    {
      label: 'an unused kind, renamed',
      auth: 'admin',
      admin: true,
      ok: 200,
      build: async (w) => ({ params: { id: await workflowItem(w, 'ticket_kinds') }, body: { name: 'Renamed' } }),
    },
  ],
  'DELETE /api/w/:slug/workflow/kinds/:id': [
    { label: 'an unused kind', auth: 'admin', admin: true, ok: 200, build: async (w) => ({ params: { id: await workflowItem(w, 'ticket_kinds') } }) },
  ],
  'POST /api/w/:slug/workflow/priorities': [
    { label: 'a new priority', auth: 'admin', admin: true, ok: 201, build: () => ({ body: { key: `probe_${uniq()}`, name: 'Probe' } }) },
  ],
  'PUT /api/w/:slug/workflow/priorities/:id': [
    {
      label: 'an unused priority, renamed',
      auth: 'admin',
      admin: true,
      ok: 200,
      build: async (w) => ({ params: { id: await workflowItem(w, 'priorities') }, body: { name: 'Renamed' } }),
    },
  ],
  'DELETE /api/w/:slug/workflow/priorities/:id': [
    { label: 'an unused priority', auth: 'admin', admin: true, ok: 200, build: async (w) => ({ params: { id: await workflowItem(w, 'priorities') } }) },
  ],
  'POST /api/w/:slug/workflow/labels': [{ label: 'a new label', auth: 'admin', admin: true, ok: 201, build: () => ({ body: { name: `probe ${uniq()}` } }) }],
  'PUT /api/w/:slug/workflow/labels/:id': [
    {
      label: 'an unused label, renamed',
      auth: 'admin',
      admin: true,
      ok: 200,
      build: async (w) => ({ params: { id: await workflowItem(w, 'labels') }, body: { name: `renamed ${uniq()}` } }),
    },
  ],
  'DELETE /api/w/:slug/workflow/labels/:id': [
    { label: 'an unused label', auth: 'admin', admin: true, ok: 200, build: async (w) => ({ params: { id: await workflowItem(w, 'labels') } }) },
  ],
  'GET /api/w/:slug/people': [
    { label: 'everyone they may see', auth: 'read', ok: 200 },
    { label: 'the people of client B', auth: 'read', ok: 200, build: (w) => ({ query: `clientId=${w.clients.b}` }) },
  ],
  'GET /api/w/:slug/invitations': [{ label: 'list', auth: 'admin', admin: true, ok: 200 }],
  'POST /api/w/:slug/invitations': [
    {
      label: 'a new member',
      auth: 'admin',
      admin: true,
      ok: 201,
      build: () => ({ body: { email: `invitee-${uniq()}@example.test`, name: 'Invitee', role: 'member' } }),
    },
    {
      label: 'a new owner',
      auth: 'admin',
      admin: true,
      ok: (c) => (owner(c) ? 201 : 403),
      build: () => ({ body: { email: `owner-${uniq()}@example.test`, name: 'Owner', role: 'owner' } }),
    },
  ],
  'POST /api/w/:slug/invitations/:id/resend': [{ label: 'a pending one', auth: 'admin', admin: true, ok: 200, build: anInvitation }],
  'DELETE /api/w/:slug/invitations/:id': [{ label: 'a pending one', auth: 'admin', admin: true, ok: 200, build: anInvitation }],
  'POST /api/w/:slug/members/:identityId/deactivate': [{ label: 'a member', auth: 'admin', admin: true, ok: 200, build: aMember }],
  'POST /api/w/:slug/members/:identityId/reactivate': [{ label: 'a member', auth: 'admin', admin: true, ok: 200, build: aMember }],
  'GET /api/w/:slug/settings': [{ label: 'the settings', auth: 'admin', admin: true, ok: 200 }],
  'PATCH /api/w/:slug/settings': [{ label: 'nothing changed', auth: 'admin', admin: true, ok: 200, body: {} }],
  'GET /api/w/:slug/tokens': [{ label: 'own tokens', auth: 'session', ok: 200 }],
  'POST /api/w/:slug/tokens': [{ label: 'read token', auth: 'session', ok: 201, body: { name: 'probe', scopes: ['read'] } }],
  'DELETE /api/w/:slug/tokens/:id': [
    {
      label: "the owner's token",
      auth: 'session',
      ok: (c) => (isAdmin(c) ? 200 : 404),
      build: async (w) => ({ params: { id: (await makeToken(w.app.db.sql, w.ws, w.people.owner, { scopes: ['read'] })).id } }),
    },
  ],

  'GET /api/w/:slug/tickets': [
    { label: 'list', auth: 'read', ok: 200 },
    { label: 'queue=inbox', auth: 'read', ok: inboxAccess(200), query: 'queue=inbox' },
    { label: 'projectId of PH', auth: 'read', ok: (c) => (c.allowList ? 403 : 200), build: (w) => ({ query: `projectId=${w.projects.h.id}` }) },
    { label: 'q = hidden human id', auth: 'read', ok: 200, build: (w) => ({ query: `q=${w.tickets.hidden.humanId}` }) },
  ],
  'GET /api/w/:slug/tickets/:ref': [
    { label: 'visible', auth: 'read', target: visible, ok: 200, build: (w) => ({ params: ref(w.tickets.visA) }) },
    { label: 'visible, linked to hidden', auth: 'read', target: visible, ok: 200, build: (w) => ({ params: ref(w.tickets.visB) }) },
    { label: 'hidden', auth: 'read', target: hidden, ok: 200, build: (w) => ({ params: ref(w.tickets.hidden) }) },
    { label: 'hidden by uuid', auth: 'read', target: hidden, ok: 200, build: (w) => ({ params: { ref: w.tickets.hidden.id } }) },
    { label: 'moved out of sight', auth: 'read', target: hidden, ok: 200, build: (w) => ({ params: { ref: w.tickets.moved.id } }) },
    { label: 'inbox', auth: 'read', target: inbox, ok: 200, build: (w) => ({ params: ref(w.tickets.inbox) }) },
  ],
  'POST /api/w/:slug/tickets': [
    { label: 'in PA', auth: 'write', ok: 201, build: (w) => ({ body: { projectId: w.projects.a.id, title: 'Probe' } }) },
    {
      label: 'in PH',
      auth: 'write',
      ok: (c) => (isClient(c) ? 404 : seesHiddenProject(c) ? 201 : 403),
      build: (w) => ({ body: { projectId: w.projects.h.id, title: 'Probe' } }),
    },
    { label: 'in the Inbox', auth: 'write', ok: inboxAccess(201), body: { projectId: null, title: 'Probe' } },
  ],
  'PATCH /api/w/:slug/tickets/:ref': [
    { label: 'visible', auth: 'write', target: visible, ok: 200, build: (w) => ({ params: ref(w.tickets.visA), body: {} }) },
    { label: 'hidden', auth: 'write', target: hidden, ok: 200, build: (w) => ({ params: ref(w.tickets.hidden), body: {} }) },
  ],
  'POST /api/w/:slug/tickets/:ref/move': [
    {
      label: 'visible, to its own project',
      auth: 'write',
      target: visible,
      ok: staffOnly(200),
      build: async (w) => ({ ...(await freshRef('visible')(w)), body: { projectId: w.projects.a.id } }),
    },
    {
      label: 'hidden, to its own project',
      auth: 'write',
      target: hidden,
      ok: 200,
      build: async (w) => ({ ...(await freshRef('hidden')(w)), body: { projectId: w.projects.h.id } }),
    },
  ],
  'POST /api/w/:slug/tickets/:ref/archive': [
    {
      label: 'visible, restore (no-op)',
      auth: 'session',
      target: visible,
      ok: staffOnly(200),
      build: (w) => ({ params: ref(w.tickets.visA), body: { archived: false } }),
    },
    {
      label: 'hidden, restore (no-op)',
      auth: 'session',
      target: hidden,
      ok: 200,
      build: (w) => ({ params: ref(w.tickets.hidden), body: { archived: false } }),
    },
  ],
  'DELETE /api/w/:slug/tickets/:ref': [
    { label: 'visible', auth: 'session', target: visible, admin: true, ok: 200, build: freshRef('visible') },
    { label: 'hidden', auth: 'session', target: hidden, admin: true, ok: 200, build: freshRef('hidden') },
  ],
  'POST /api/w/:slug/tickets/:id/redact': [
    {
      label: 'visible',
      auth: 'session',
      target: visible,
      admin: true,
      ok: 200,
      build: async (w) => ({ params: { id: (await w.fresh('visible')).id }, body: { reason: 'probe' } }),
    },
    {
      label: 'hidden',
      auth: 'session',
      target: hidden,
      admin: true,
      ok: 200,
      build: async (w) => ({ params: { id: (await w.fresh('hidden')).id }, body: { reason: 'probe' } }),
    },
  ],

  'PUT /api/w/:slug/tickets/:ref/parent': [
    { label: 'visible, clear (no-op)', auth: 'write', target: visible, ok: 200, build: (w) => ({ params: ref(w.tickets.visA), body: { parentId: null } }) },
    { label: 'hidden, clear (no-op)', auth: 'write', target: hidden, ok: 200, build: (w) => ({ params: ref(w.tickets.hidden), body: { parentId: null } }) },
    {
      label: 'visible, parent hidden',
      auth: 'write',
      target: hidden,
      ok: 200,
      build: async (w) => ({ ...(await freshRef('visible')(w)), body: { parentId: w.tickets.hidden.id } }),
    },
  ],
  'POST /api/w/:slug/tickets/:ref/links': [
    {
      label: 'visible to visible',
      auth: 'write',
      target: visible,
      ok: 201,
      build: (w) => ({ params: ref(w.tickets.visA), body: { targetId: w.tickets.visB.id, kind: 'relates' } }),
    },
    {
      label: 'hidden to visible',
      auth: 'write',
      target: hidden,
      ok: 201,
      build: (w) => ({ params: ref(w.tickets.hidden), body: { targetId: w.tickets.visB.id, kind: 'relates' } }),
    },
    {
      label: 'visible to hidden',
      auth: 'write',
      target: hidden,
      ok: 201,
      build: (w) => ({ params: ref(w.tickets.visB), body: { targetId: w.tickets.hidden.id, kind: 'relates' } }),
    },
  ],
  'DELETE /api/w/:slug/tickets/:ref/links/:linkId': [
    { label: 'visible to visible', auth: 'write', target: visible, ok: 200, build: freshLink('visible', 'visB') },
    { label: 'hidden to visible', auth: 'write', target: hidden, ok: 200, build: freshLink('hidden', 'visB') },
    { label: 'visible to hidden', auth: 'write', target: hidden, ok: 200, build: freshLink('visible', 'hidden') },
  ],
  'POST /api/w/:slug/tickets/:ref/codehost': [
    {
      label: 'visible',
      auth: 'write',
      target: visible,
      ok: 201,
      build: (w) => ({ params: ref(w.tickets.visA), body: { repo: 'acme/web', url: 'https://github.com/acme/web/pull/1', pr: 1 } }),
    },
    {
      label: 'hidden',
      auth: 'write',
      target: hidden,
      ok: 201,
      build: (w) => ({ params: ref(w.tickets.hidden), body: { repo: 'acme/web', url: 'https://github.com/acme/web/pull/1', pr: 1 } }),
    },
  ],
  'DELETE /api/w/:slug/tickets/:ref/codehost/:linkId': [
    { label: 'visible', auth: 'write', target: visible, ok: 200, build: freshCodehost('visible') },
    { label: 'hidden', auth: 'write', target: hidden, ok: 200, build: freshCodehost('hidden') },
  ],
  'GET /api/w/:slug/codehost/links': [{ label: 'list', auth: 'session', ok: 200 }],
  'POST /api/w/:slug/tickets/:ref/viewers': [
    {
      label: 'visible',
      auth: 'session',
      target: visible,
      ok: addViewers(200),
      build: (w) => ({ params: ref(w.tickets.visA), body: { identityIds: [w.people.admin.id] } }),
    },
    {
      label: 'hidden',
      auth: 'session',
      target: hidden,
      ok: 200,
      build: (w) => ({ params: ref(w.tickets.hidden), body: { identityIds: [w.people.admin.id] } }),
    },
  ],
  'DELETE /api/w/:slug/tickets/:ref/viewers/:identityId': [
    { label: 'visible', auth: 'session', target: visible, ok: addViewers(200), build: freshViewer('visible') },
    { label: 'hidden', auth: 'session', target: hidden, ok: 200, build: freshViewer('hidden') },
  ],
  'POST /api/w/:slug/tickets/:ref/visibility': [
    {
      label: 'visible',
      auth: 'session',
      target: visible,
      ok: 200,
      build: (w) => ({ params: ref(w.tickets.visA), body: { audience: 'client', mentions: [] } }),
    },
    {
      label: 'hidden',
      auth: 'session',
      target: hidden,
      ok: 200,
      build: (w) => ({ params: ref(w.tickets.hidden), body: { audience: 'client', mentions: [] } }),
    },
  ],

  'GET /api/w/:slug/tickets/:ref/comments': [
    { label: 'visible', auth: 'read', target: visible, ok: 200, build: (w) => ({ params: ref(w.tickets.visA) }) },
    { label: 'hidden', auth: 'read', target: hidden, ok: 200, build: (w) => ({ params: ref(w.tickets.hidden) }) },
  ],
  'POST /api/w/:slug/tickets/:ref/comments': [
    { label: 'visible', auth: 'write', target: visible, ok: 201, build: (w) => ({ params: ref(w.tickets.visA), body: { body: 'Probe', audience: 'client' } }) },
    { label: 'hidden', auth: 'write', target: hidden, ok: 201, build: (w) => ({ params: ref(w.tickets.hidden), body: { body: 'Probe', audience: 'client' } }) },
  ],
  'PATCH /api/w/:slug/tickets/:ref/comments/:id': [
    {
      label: "the owner's client comment (author only)",
      auth: 'write',
      target: visible,
      ok: (c) => (owner(c) ? 200 : 403),
      build: (w) => ({ params: { ...ref(w.tickets.visA), id: w.comments.visClient }, body: { audience: 'client' } }),
    },
    {
      label: "the owner's internal comment",
      auth: 'write',
      target: (c) => !isClient(c),
      ok: (c) => (owner(c) ? 200 : 403),
      build: (w) => ({ params: { ...ref(w.tickets.visA), id: w.comments.visInternal }, body: { audience: 'internal' } }),
    },
    {
      label: 'a comment on the hidden ticket',
      auth: 'write',
      target: hidden,
      ok: (c) => (owner(c) ? 200 : 403),
      build: (w) => ({ params: { ...ref(w.tickets.hidden), id: w.comments.hiddenClient }, body: { audience: 'client' } }),
    },
  ],
  'DELETE /api/w/:slug/tickets/:ref/comments/:id': [
    { label: "the owner's client comment", auth: 'write', target: visible, ok: (c) => (isAdmin(c) ? 200 : 403), build: freshComment('visible', 'client') },
    {
      label: "the owner's internal comment",
      auth: 'write',
      target: (c) => !isClient(c),
      ok: (c) => (isAdmin(c) ? 200 : 403),
      build: freshComment('visible', 'internal'),
    },
    { label: 'a comment on a hidden ticket', auth: 'write', target: hidden, ok: 200, build: freshComment('hidden', 'client') },
  ],
  'POST /api/w/:slug/tickets/:ref/attachments': [
    { label: 'visible', auth: 'write', target: visible, ok: 201, build: upload('visA') },
    { label: 'hidden', auth: 'write', target: hidden, ok: 201, build: upload('hidden') },
  ],
  'GET /api/w/:slug/attachments/:id/download': [
    { label: 'client attachment', auth: 'read', target: visible, ok: 200, build: (w) => ({ params: { id: w.attachments.visClient } }) },
    { label: 'internal attachment', auth: 'read', target: (c) => !isClient(c), ok: 200, build: (w) => ({ params: { id: w.attachments.visInternal } }) },
    { label: 'attachment of the hidden ticket', auth: 'read', target: hidden, ok: 200, build: (w) => ({ params: { id: w.attachments.hidden } }) },
  ],

  'GET /api/w/:slug/time': [
    { label: 'own week', auth: 'read', workspaceOnly: true, ok: 200, build: (w) => ({ query: `from=${w.today}&to=${w.today}` }) },
    {
      label: "the owner's week",
      auth: 'read',
      workspaceOnly: true,
      admin: true,
      ok: 200,
      build: (w) => ({ query: `from=${w.today}&to=${w.today}&userId=${w.people.owner.id}` }),
    },
  ],
  'POST /api/w/:slug/time': [
    {
      label: 'visible ticket',
      auth: 'write',
      workspaceOnly: true,
      target: visible,
      ok: 201,
      build: (w) => ({ body: { ticketId: w.tickets.visA.id, spentOn: w.today, minutes: 1 } }),
    },
    {
      label: 'hidden ticket',
      auth: 'write',
      workspaceOnly: true,
      target: hidden,
      ok: 201,
      build: (w) => ({ body: { ticketId: w.tickets.hidden.id, spentOn: w.today, minutes: 1 } }),
    },
  ],
  'PATCH /api/w/:slug/time/:id': [
    {
      label: "the owner's entry on a visible ticket",
      auth: 'write',
      workspaceOnly: true,
      target: visible,
      admin: true,
      ok: 200,
      build: (w) => ({ params: { id: w.entries.ownerOnVisA }, body: { minutes: 30 } }),
    },
    {
      label: "the owner's entry on the hidden ticket",
      auth: 'write',
      workspaceOnly: true,
      ok: hiddenEntry(200),
      build: (w) => ({ params: { id: w.entries.ownerOnHidden }, body: { minutes: 45 } }),
    },
  ],
  'DELETE /api/w/:slug/time/:id': [
    {
      label: "the owner's entry on a visible ticket",
      auth: 'session',
      workspaceOnly: true,
      target: visible,
      admin: true,
      ok: 200,
      build: freshEntry('visible'),
    },
    { label: "the owner's entry on the hidden ticket", auth: 'session', workspaceOnly: true, ok: hiddenEntry(200), build: freshEntry('hidden') },
  ],
  'POST /api/w/:slug/time/:id/corrections': [
    {
      label: 'entry in an open period',
      auth: 'session',
      workspaceOnly: true,
      target: visible,
      admin: true,
      ok: 400,
      build: (w) => ({ params: { id: w.entries.ownerOnVisA }, body: { minutes: -5 } }),
    },
    {
      label: 'entry on the hidden ticket',
      auth: 'session',
      workspaceOnly: true,
      ok: hiddenEntry(400),
      build: (w) => ({ params: { id: w.entries.ownerOnHidden }, body: { minutes: -5 } }),
    },
  ],
  'POST /api/w/:slug/time/tickets/:id/reattribute': [
    {
      label: 'visible ticket',
      auth: 'session',
      workspaceOnly: true,
      target: visible,
      admin: true,
      ok: 200,
      build: (w) => ({ params: { id: w.tickets.visA.id } }),
    },
    {
      label: 'hidden ticket',
      auth: 'session',
      workspaceOnly: true,
      target: hidden,
      admin: true,
      ok: 200,
      build: (w) => ({ params: { id: w.tickets.hidden.id } }),
    },
  ],
  'GET /api/w/:slug/periods': [{ label: 'list', auth: 'session', workspaceOnly: true, admin: true, ok: 200 }],
  'POST /api/w/:slug/periods': [{ label: 'open the next', auth: 'session', workspaceOnly: true, admin: true, ok: [200, 201], body: {} }],
  'POST /api/w/:slug/periods/:id/close': [{ label: 'an old period', auth: 'session', workspaceOnly: true, admin: true, ok: 200, build: oldPeriod }],
  'POST /api/w/:slug/periods/:id/reopen': [{ label: 'an old period', auth: 'session', workspaceOnly: true, admin: true, ok: 200, build: oldPeriod }],
  'GET /api/w/:slug/categories': [{ label: 'list', auth: 'read', workspaceOnly: true, ok: 200 }],
  'POST /api/w/:slug/categories': [
    { label: 'new', auth: 'admin', workspaceOnly: true, admin: true, ok: 201, build: () => ({ body: { name: `Probe ${uniq()}` } }) },
  ],
  'PATCH /api/w/:slug/members/:identityId': [
    {
      label: "the member's timezone",
      // one's own settings by session; a token needs the admin scope (issue 22)
      auth: 'admin',
      workspaceOnly: true,
      ok: (c) => (isAdmin(c) || c.role === 'member' ? 200 : 403),
      build: (w) => ({ params: { identityId: w.people.member.id }, body: { timezone: 'UTC' } }),
    },
  ],
  'PUT /api/w/:slug/projects/:projectId/members/:identityId/category': [
    {
      label: "the member's category on PA",
      auth: 'admin',
      workspaceOnly: true,
      admin: true,
      ok: 200,
      build: (w) => ({ params: { projectId: w.projects.a.id, identityId: w.people.member.id }, body: { categoryId: null } }),
    },
  ],

  'GET /api/w/:slug/changes': [{ label: 'whole feed', auth: 'read', ok: 200, query: 'after=0&limit=500' }],
  'GET /api/w/:slug/board': [{ label: 'board', auth: 'read', ok: 200 }],
  'GET /api/w/:slug/board/:stateId': [{ label: 'default column', auth: 'read', ok: 200, build: (w) => ({ params: { stateId: w.states.default } }) }],
  'GET /api/w/:slug/my': [{ label: 'my work', auth: 'read', ok: 200 }],
  'GET /api/w/:slug/documents': [
    { label: 'list', auth: 'read', ok: 200 },
    { label: "client B's", auth: 'read', ok: 200, build: (w) => ({ query: `clientId=${w.clients.b}` }) },
  ],
  // client B's combined document: Owner and Admin without an allow-list; nobody else here holds a grant, manages a project or is a billing contact
  'GET /api/w/:slug/documents/:id/download': [
    { label: "client B's combined document", auth: 'read', ok: (c) => (hidden(c) ? 200 : 403), build: (w) => ({ params: { id: w.documents.hiddenCombined } }) },
  ],
  'POST /api/w/:slug/documents/:id/deliveries/:deliveryId/resend': [
    {
      label: "a failed delivery of client B's combined document",
      auth: 'session',
      admin: true,
      ok: 202,
      // a new failed delivery per cell: a resend makes it pending (a second resend would be 409)
      build: async (w) => {
        const [d] = await w.app.db.sql<{ id: string }[]>`
          insert into document_deliveries (workspace_id, timesheet_id, email, state, detail)
          select workspace_id, timesheet_id, ${`probe-${uniq()}@example.test`}, 'failed', '550 5.1.1 probe' from documents where id = ${w.documents.hiddenCombined}
          returning id`;
        return { params: { id: w.documents.hiddenCombined, deliveryId: d!.id } };
      },
    },
  ],
  'GET /api/w/:slug/clients/:id/document-grants': [
    { label: "client A's", auth: 'session', admin: true, ok: 200, build: (w) => ({ params: { id: w.clients.a } }) },
  ],
  'PUT /api/w/:slug/clients/:id/document-grants': [
    {
      label: "revoke the member's grant for client A (idempotent)",
      auth: 'session',
      admin: true,
      ok: 200,
      build: (w) => ({ params: { id: w.clients.a }, body: { identityId: w.people.member.id, granted: false } }),
    },
  ],
  'GET /api/w/:slug/billing/runs': [{ label: 'list', auth: 'session', admin: true, ok: 200 }],
  'POST /api/w/:slug/billing/runs': [
    { label: 'a dry run', auth: 'session', admin: true, ok: 200, build: async (w) => ({ body: { periodId: (await billingPeriod(w)).id, dryRun: true } }) },
  ],
  'GET /api/w/:slug/billing/runs/:id': [{ label: 'a run', auth: 'session', admin: true, ok: 200, build: aRun }],
  'GET /api/w/:slug/billing/runs/:id/entries': [{ label: "a run's entries", auth: 'session', admin: true, ok: 200, build: aRun }],
  'POST /api/w/:slug/billing/runs/:id/void': [
    { label: 'a fresh run', auth: 'session', admin: true, ok: 200, build: async (w) => ({ ...(await aRun(w)), body: { reason: 'matrix probe' } }) },
  ],
  'POST /api/w/:slug/billing/runs/:id/approve': [
    {
      label: 'a run awaiting approval',
      auth: 'session',
      admin: true,
      ok: 200,
      build: async (w) => ({
        params: { id: (await makeBillingRun(w.app.db.sql, w.ws, { periodId: (await billingPeriod(w)).id, status: 'awaiting_approval' })).id },
        body: {},
      }),
    },
    { label: 'a completed run (409 run_not_awaiting_approval)', auth: 'session', admin: true, ok: 409, build: async (w) => ({ ...(await aRun(w)), body: {} }) },
  ],
  'GET /api/w/:slug/billing/banks': [{ label: 'list', auth: 'session', admin: true, ok: 200 }],
  'POST /api/w/:slug/billing/banks': [
    { label: 'a new bank of client A', auth: 'session', admin: true, ok: 201, build: (w) => ({ body: { clientId: w.clients.a, name: `Probe ${uniq()}` } }) },
  ],
  'POST /api/w/:slug/billing/banks/:id/deposits': [
    {
      label: 'a deposit',
      auth: 'session',
      admin: true,
      ok: 201,
      build: async (w) => ({ params: { id: (await makeBank(w.app.db.sql, w.ws, { clientId: w.clients.a })).id }, body: { minutes: 60, depositedOn: w.today } }),
    },
  ],
  'GET /api/w/:slug/clients/:id/banks': [{ label: "client A's", auth: 'session', admin: true, ok: 200, build: (w) => ({ params: { id: w.clients.a } }) }],
  'GET /api/w/:slug/clients': [{ label: 'list', auth: 'read', workspaceOnly: true, ok: 200 }],
  'POST /api/w/:slug/clients': [
    { label: 'a new client', auth: 'admin', admin: true, ok: 201, build: () => ({ body: { name: 'Probe', code: `P${uniq().toUpperCase()}` } }) },
  ],
  'GET /api/w/:slug/clients/:id': [{ label: "client A's", auth: 'admin', admin: true, ok: 200, build: (w) => ({ params: { id: w.clients.a } }) }],
  'PATCH /api/w/:slug/clients/:id': [
    { label: 'client A, nothing changed', auth: 'admin', admin: true, ok: 200, build: (w) => ({ params: { id: w.clients.a }, body: {} }) },
  ],
  'POST /api/w/:slug/clients/:id/archive': [
    { label: 'client A, restore (no-op)', auth: 'admin', admin: true, ok: 200, build: (w) => ({ params: { id: w.clients.a }, body: { archived: false } }) },
  ],
  'GET /api/w/:slug/clients/:id/recipients': [{ label: "client A's", auth: 'admin', admin: true, ok: 200, build: (w) => ({ params: { id: w.clients.a } }) }],
  'PUT /api/w/:slug/clients/:id/recipients': [
    { label: 'a client of its own', auth: 'admin', admin: true, ok: 200, build: async (w) => ({ params: { id: await aClient(w) }, body: { recipients: [] } }) },
  ],
  'GET /api/w/:slug/projects': [{ label: 'list', auth: 'read', ok: 200 }],
  'POST /api/w/:slug/projects': [
    { label: 'a new project', auth: 'admin', admin: true, ok: 201, build: () => ({ body: { key: `Q${uniq().toUpperCase()}`, name: 'Probe' } }) },
  ],
  'GET /api/w/:slug/projects/:id': [
    { label: 'PA', auth: 'read', workspaceOnly: true, ok: 200, build: (w) => ({ params: { id: w.projects.a.id } }) },
    { label: 'PH', auth: 'read', workspaceOnly: true, target: hidden, ok: 200, build: (w) => ({ params: { id: w.projects.h.id } }) },
  ],
  'PATCH /api/w/:slug/projects/:id': [
    { label: 'PA, nothing changed', auth: 'admin', admin: true, ok: 200, build: (w) => ({ params: { id: w.projects.a.id }, body: {} }) },
    { label: 'PH, nothing changed', auth: 'admin', admin: true, ok: 200, build: (w) => ({ params: { id: w.projects.h.id }, body: {} }) },
  ],
  'POST /api/w/:slug/projects/:id/archive': [
    { label: 'PA, restore (no-op)', auth: 'admin', admin: true, ok: 200, build: (w) => ({ params: { id: w.projects.a.id }, body: { archived: false } }) },
  ],
  'GET /api/w/:slug/projects/:id/members': [
    { label: 'PA', auth: 'read', workspaceOnly: true, ok: 200, build: (w) => ({ params: { id: w.projects.a.id } }) },
    { label: 'PH', auth: 'read', workspaceOnly: true, target: hidden, ok: 200, build: (w) => ({ params: { id: w.projects.h.id } }) },
  ],
  'PUT /api/w/:slug/projects/:id/members/:identityId': [
    {
      label: 'the member on PA, as they are',
      auth: 'admin',
      admin: true,
      ok: 200,
      build: (w) => ({ params: { id: w.projects.a.id, identityId: w.people.member.id }, body: { access: 'full' } }),
    },
  ],
  'DELETE /api/w/:slug/projects/:id/members/:identityId': [
    {
      label: 'the admin from a project of its own',
      auth: 'admin',
      admin: true,
      ok: 200,
      build: async (w) => ({ params: { id: await aProject(w, w.people.admin.id), identityId: w.people.admin.id } }),
    },
  ],
  'GET /api/w/:slug/rates': [{ label: 'the rate table', auth: 'admin', admin: true, ok: 200 }],
  'PUT /api/w/:slug/rates': [{ label: 'an empty rate table', auth: 'admin', admin: true, ok: 200, build: () => ({ body: { rates: [] } }) }],
  'PATCH /api/w/:slug/categories/:id': [
    {
      label: 'a category of its own',
      auth: 'admin',
      workspaceOnly: true,
      admin: true,
      ok: 200,
      build: async (w) => ({ params: { id: await aCategory(w) }, body: { name: `Probe ${uniq()}` } }),
    },
  ],
  'DELETE /api/w/:slug/categories/:id': [
    { label: 'an unused category', auth: 'admin', workspaceOnly: true, admin: true, ok: 200, build: async (w) => ({ params: { id: await aCategory(w) } }) },
  ],
  // The matrix's workspace has no mailbox, and its app no secret key to seal a password with: a
  // new mailbox without one is 400 password_required (test/mail-settings.test.ts connects one).
  'GET /api/w/:slug/mailbox': [{ label: 'none connected', auth: 'session', admin: true, ok: 404 }],
  'PUT /api/w/:slug/mailbox': [
    {
      label: 'a new mailbox without its password',
      auth: 'session',
      admin: true,
      ok: 400,
      body: { host: 'imap.example.test', port: 993, secure: true, user: 'probe' },
    },
  ],
  'DELETE /api/w/:slug/mailbox': [{ label: 'none connected', auth: 'session', admin: true, ok: 404 }],
  'POST /api/w/:slug/mailbox/poll': [{ label: 'none connected', auth: 'session', admin: true, ok: 404 }],
  'GET /api/w/:slug/mailbox/messages': [{ label: 'the intake log', auth: 'session', admin: true, ok: 200 }],
};

/**
 * The refusal a probe's credential gates give `c` before any object is looked up (the credential,
 * then client users on time routes), or null when `c` passes them.
 */
export function credentialGate(p: Probe, c: Cred): Expected | null {
  const token = c.kind === 'token' || c.kind === 'agent';
  if (p.auth !== 'public') {
    if (c.kind === 'none') return { status: [401] };
    if (p.auth === 'cookie' && token) return { status: [401] };
    if (p.auth === 'bearer' && !token) return { status: [401] };
    if (p.auth === 'session' && token) return { status: [403], reason: 'session_required' };
    if (p.auth === 'write' && token && !c.scopes.includes('write')) return { status: [403], reason: 'missing_scope' };
    if (p.auth === 'admin' && token && !c.scopes.includes('admin')) return { status: [403], reason: 'missing_scope' };
  }
  if (p.workspaceOnly && isClient(c)) return { status: [403], reason: 'workspace_users_only' };
  return null;
}

/** The status (and for credential gates the reason) the contract gives `c` for a probe. */
export function expected(p: Probe, c: Cred): Expected {
  const gate = credentialGate(p, c);
  if (gate) return gate;
  if (p.target && !p.target(c)) return { status: [404] };
  if (p.admin && !isAdmin(c)) return { status: [403] };
  const ok = typeof p.ok === 'function' ? p.ok(c) : p.ok;
  return { status: Array.isArray(ok) ? ok : [ok] };
}

/** Fills `:name` segments of a router path. */
export function fillPath(pattern: string, params: Record<string, string>): string {
  return pattern.replace(/:([A-Za-z]+)/g, (_m, name: string) => {
    const v = params[name];
    if (v === undefined) throw new Error(`no value for :${name} in ${pattern}`);
    return encodeURIComponent(v);
  });
}
