import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/connect.ts';
import { issueToken } from '../auth/tokens.ts';
import type { Role } from '../auth/principal.ts';
import { addPerson } from '../people/users.ts';
import { assignNumber } from '../tickets/numbering.ts';
import { refreshStoredHtml } from '../tickets/markdown-refresh.ts';
import { addProjectMember, createClient, createProject, createWorkspace } from '../workspaces/create.ts';
import { demoTickets } from './tickets.ts';
import { seedDemoTime } from './time.ts';

export const DEMO_SLUG = 'northwind';
export const DEMO_PASSWORD = 'northwind-demo';

type PersonKey = 'owner' | 'admin' | 'member' | 'agent' | 'clientElevated' | 'client';
const people: { key: PersonKey; role: Role; email: string; name: string; client?: 'GLX' }[] = [
  { key: 'owner', role: 'owner', email: 'nora@northwind.test', name: 'Nora Lind' },
  { key: 'admin', role: 'admin', email: 'adam@northwind.test', name: 'Adam Berg' },
  { key: 'member', role: 'member', email: 'maya@northwind.test', name: 'Maya Chen' },
  { key: 'agent', role: 'agent', email: 'buildbot@northwind.test', name: 'Build Bot' },
  { key: 'clientElevated', role: 'client_elevated', email: 'carla@globex.test', name: 'Carla Ruiz', client: 'GLX' },
  { key: 'client', role: 'client', email: 'colin@globex.test', name: 'Colin Park', client: 'GLX' },
];

export interface DemoPerson {
  id: string;
  email: string;
  password: string | null;
  token: string;
}

export interface Demo {
  slug: string;
  people: Record<PersonKey, DemoPerson>;
  tokens: { readOnly: string; noTriage: string; projectRestricted: { token: string; projectId: string } };
  projects: { id: string; key: string; name: string; billingClientId: string | null }[];
  clients: { id: string; name: string }[];
}

/**
 * Ensures the demo workspace (a small agency with two clients and three projects) and
 * mints fresh tokens for it. Safe to run again and concurrently: the data is created once.
 */
export async function ensureDemo(sql: Db): Promise<Demo> {
  await sql.begin(async (t) => {
    const db = t as unknown as Db;
    await db`select pg_advisory_xact_lock(7262002)`;
    const [exists] = await db`select 1 from workspaces where slug = ${DEMO_SLUG}`;
    if (!exists) await createDemoData(db);
  });
  return describeDemo(sql);
}

async function createDemoData(sql: Db): Promise<void> {
  const ws = await createWorkspace(sql, { slug: DEMO_SLUG, name: 'Northwind Studio' });
  const globex = await createClient(sql, {
    workspaceId: ws,
    name: 'Globex Corporation',
    code: 'GLX',
    locale: 'en-US',
    recipients: [{ email: 'ap@globex.test', name: 'Globex Accounts Payable' }],
  });
  const initech = await createClient(sql, {
    workspaceId: ws,
    name: 'Initech',
    code: 'INI',
    locale: 'de-DE',
    timesheetLayout: 'project',
    recipients: [{ email: 'buchhaltung@initech.test' }],
  });
  const [design, dev] = await sql<{ id: string }[]>`
    insert into consultant_categories (workspace_id, name) values (${ws}, 'Design'), (${ws}, 'Development') returning id`;
  const web = await createProject(sql, { workspaceId: ws, key: 'WEB', name: 'Globex Website Relaunch', billingClientId: globex, collaboratorIds: [initech] });
  const app = await createProject(sql, { workspaceId: ws, key: 'APP', name: 'Initech Mobile App', billingClientId: initech, billingMode: 'on_close' });
  const ops = await createProject(sql, { workspaceId: ws, key: 'OPS', name: 'Internal Operations', billingClientId: null });

  const ids = {} as Record<PersonKey, string>;
  for (const p of people) {
    ids[p.key] = await addPerson(sql, {
      workspaceId: ws,
      email: p.email,
      name: p.name,
      role: p.role,
      password: p.role === 'agent' ? null : DEMO_PASSWORD,
      clientId: p.client ? globex : null,
      timezone: p.key === 'member' ? 'Europe/Berlin' : 'UTC',
      weeklyTargetMinutes: p.role === 'member' ? 2400 : null,
    });
  }
  await sql`update memberships set category_id = ${dev!.id} where workspace_id = ${ws} and identity_id in (${ids.member}, ${ids.admin})`;
  // the demo member reads the operators' console (/ops) as a billing operator
  await sql`update memberships set billing_operator = true where workspace_id = ${ws} and identity_id = ${ids.member}`;
  await addProjectMember(sql, { workspaceId: ws, projectId: web, identityId: ids.member, access: 'full', isManager: true, categoryId: design!.id });
  await addProjectMember(sql, { workspaceId: ws, projectId: app, identityId: ids.member, access: 'limited' });
  await addProjectMember(sql, { workspaceId: ws, projectId: web, identityId: ids.agent, access: 'full' });
  await addProjectMember(sql, { workspaceId: ws, projectId: ops, identityId: ids.admin, access: 'full', isManager: true });

  const projects = { WEB: { id: web, client: globex }, APP: { id: app, client: initech }, OPS: { id: ops, client: null }, INBOX: { id: null, client: null } };
  const lookups = async (table: string) =>
    Object.fromEntries((await sql<{ key: string; id: string }[]>`select key, id from ${sql(table)} where workspace_id = ${ws}`).map((r) => [r.key, r.id]));
  const states = await lookups('workflow_states');
  const kinds = await lookups('ticket_kinds');
  const priorities = await lookups('priorities');
  const labels = Object.fromEntries(
    (await sql<{ name: string; id: string }[]>`select name, id from labels where workspace_id = ${ws}`).map((r) => [r.name, r.id]),
  );

  const created: string[] = [];
  for (const [i, d] of demoTickets.entries()) {
    const project = projects[d.project];
    const id = randomUUID();
    const reporter = ids[d.reporter];
    const at = new Date(Date.now() - (demoTickets.length - i) * 3 * 3600_000);
    const number = await assignNumber(sql, ws, project.id, id);
    const closed = d.state === 'done' || d.state === 'cancelled';
    await sql`
      insert into tickets (id, workspace_id, project_id, number, title, description, kind_id, state_id, priority_id, assignee_id, reporter_id,
                           billing_client_id, estimate_minutes, due_date, source, started_by, closed_at, parent_id, created_at, updated_at)
      values (${id}, ${ws}, ${project.id}, ${number}, ${d.title}, ${d.description ?? ''}, ${kinds[d.kind]!}, ${states[d.state]!}, ${priorities[d.priority]!},
              ${d.assignee ? ids[d.assignee] : null}, ${reporter}, ${project.client}, ${d.estimate ?? null},
              ${d.dueInDays === undefined ? null : new Date(Date.now() + d.dueInDays * 86400_000).toISOString().slice(0, 10)},
              ${d.source ?? 'ui'}, ${d.reporter.startsWith('client') ? 'client' : 'workspace'}, ${closed ? at : null},
              ${d.parent === undefined ? null : created[d.parent]!}, ${at}, ${at})`;
    await sql`insert into ticket_events (workspace_id, ticket_id, kind, actor_id, payload, created_at) values (${ws}, ${id}, 'created', ${reporter}, '{}', ${at})`;
    for (const l of d.labels ?? []) await sql`insert into ticket_labels (ticket_id, label_id) values (${id}, ${labels[l]!})`;
    for (const c of d.comments ?? []) {
      await sql`insert into comments (workspace_id, ticket_id, author_id, audience, body, created_at, updated_at)
                values (${ws}, ${id}, ${ids[c.by]}, ${c.audience}, ${c.body}, ${at}, ${at})`;
    }
    if (d.viewer) await sql`insert into ticket_viewers (ticket_id, identity_id, added_by) values (${id}, ${ids[d.viewer]}, ${reporter})`;
    created.push(id);
  }
  // the descriptions' and comments' HTML, as the API's writers store it (sql/110)
  await refreshStoredHtml(sql, { ticketIds: created });
  await sql`insert into ticket_links (workspace_id, source_id, target_id, kind, created_by)
            values (${ws}, ${created[0]!}, ${created[1]!}, 'blocks', ${ids.member}), (${ws}, ${created[2]!}, ${created[5]!}, 'relates', ${ids.member})`;
  await seedDemoTime(sql, { workspaceId: ws, now: new Date(), people: { member: ids.member, admin: ids.admin }, clients: { globex, initech } });
}

async function describeDemo(sql: Db): Promise<Demo> {
  const [ws] = await sql<{ id: string }[]>`select id from workspaces where slug = ${DEMO_SLUG}`;
  const workspaceId = ws!.id;
  const rows = await sql<{ id: string; email: string }[]>`
    select i.id, i.email from identities i join memberships m on m.identity_id = i.id and m.workspace_id = ${workspaceId}`;
  const idOf = (email: string) => rows.find((r) => r.email === email)!.id;
  const out = {} as Record<PersonKey, DemoPerson>;
  const stamp = new Date().toISOString();
  for (const p of people) {
    const id = idOf(p.email);
    const kind = p.role === 'agent' ? 'agent' : 'delegated';
    const createdBy = p.role === 'agent' ? idOf(people[0]!.email) : id;
    const t = await issueToken(sql, { workspaceId, createdBy, actsAs: id, kind, name: `demo ${p.key} ${stamp}`, scopes: ['read', 'write', 'triage'] });
    out[p.key] = { id, email: p.email, password: p.role === 'agent' ? null : DEMO_PASSWORD, token: t.token };
  }
  const projects = await sql<{ id: string; key: string; name: string; billingClientId: string | null }[]>`
    select id, key, name, billing_client_id as "billingClientId" from projects where workspace_id = ${workspaceId} order by key`;
  const clients = await sql<{ id: string; name: string }[]>`select id, name from clients where workspace_id = ${workspaceId} order by name`;
  const member = out.member.id;
  const web = projects.find((p) => p.key === 'WEB')!;
  const mint = (name: string, scopes: ('read' | 'write' | 'triage')[], projectIds: string[] | null = null) =>
    issueToken(sql, { workspaceId, createdBy: member, actsAs: member, kind: 'delegated', name: `demo ${name} ${stamp}`, scopes, projectIds });
  return {
    slug: DEMO_SLUG,
    people: out,
    tokens: {
      readOnly: (await mint('read-only', ['read'])).token,
      noTriage: (await mint('no-triage', ['read', 'write'])).token,
      projectRestricted: { token: (await mint('project-restricted', ['read', 'write', 'triage'], [web.id])).token, projectId: web.id },
    },
    projects: [...projects],
    clients: [...clients],
  };
}
