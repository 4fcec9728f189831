import { randomBytes } from 'node:crypto';
import type { Db } from '../../src/db/connect.ts';
import type { Role, Scope } from '../../src/core/auth/principal.ts';
import { issueToken } from '../../src/core/auth/tokens.ts';
import { addPerson } from '../../src/core/people/users.ts';
import { addProjectMember, createClient, createProject, createWorkspace } from '../../src/core/workspaces/create.ts';

const uniq = () => randomBytes(4).toString('hex');

export interface Workspace {
  id: string;
  slug: string;
}

export async function makeWorkspace(sql: Db, slug = `ws-${uniq()}`): Promise<Workspace> {
  const id = await createWorkspace(sql, { slug, name: `Workspace ${slug}` });
  return { id, slug };
}

export interface Person {
  id: string;
  email: string;
  password: string;
  role: Role;
}

export async function makeUser(
  sql: Db,
  ws: Workspace,
  opts: { role?: Role; clientId?: string | null; name?: string; timezone?: string } = {},
): Promise<Person> {
  const role = opts.role ?? 'member';
  const email = `${role}-${uniq()}@example.test`;
  const password = `pw-${uniq()}-secret`;
  const id = await addPerson(sql, {
    workspaceId: ws.id,
    email,
    name: opts.name ?? `${role} ${uniq()}`,
    role,
    password: role === 'agent' ? null : password,
    clientId: opts.clientId ?? null,
    timezone: opts.timezone,
  });
  return { id, email, password, role };
}

export async function makeToken(
  sql: Db,
  ws: Workspace,
  person: { id: string },
  opts: { scopes?: Scope[]; projectIds?: string[] | null; expiresAt?: Date | null; kind?: 'delegated' | 'agent'; createdBy?: string } = {},
): Promise<{ id: string; token: string }> {
  const t = await issueToken(sql, {
    workspaceId: ws.id,
    createdBy: opts.createdBy ?? person.id,
    actsAs: person.id,
    kind: opts.kind ?? 'delegated',
    name: `test ${uniq()}`,
    scopes: opts.scopes ?? ['read', 'write', 'triage'],
    projectIds: opts.projectIds ?? null,
    expiresAt: opts.expiresAt ?? null,
  });
  return { id: t.id, token: t.token };
}

export async function makeClient(sql: Db, ws: Workspace, opts: { name?: string; code?: string } = {}): Promise<{ id: string; code: string }> {
  const code = opts.code ?? `C${uniq().toUpperCase()}`.slice(0, 8);
  const id = await createClient(sql, { workspaceId: ws.id, name: opts.name ?? `Client ${code}`, code });
  return { id, code };
}

export async function makeProject(
  sql: Db,
  ws: Workspace,
  opts: {
    key?: string;
    billingClientId?: string | null;
    collaboratorIds?: string[];
    members?: { person: { id: string }; access?: 'full' | 'limited'; isManager?: boolean }[];
  } = {},
): Promise<{ id: string; key: string }> {
  const key =
    opts.key ??
    `P${uniq()
      .toUpperCase()
      .replace(/[^A-Z0-9]/g, 'X')}`.slice(0, 6);
  const id = await createProject(sql, {
    workspaceId: ws.id,
    key,
    name: `Project ${key}`,
    billingClientId: opts.billingClientId ?? null,
    collaboratorIds: opts.collaboratorIds,
  });
  for (const m of opts.members ?? []) {
    await addProjectMember(sql, { workspaceId: ws.id, projectId: id, identityId: m.person.id, access: m.access ?? 'full', isManager: m.isManager });
  }
  return { id, key };
}

/** Inserts a ticket directly (no rules), for tests that need tickets to exist. Defaults come from the workflow. */
export async function makeTicket(
  sql: Db,
  ws: Workspace,
  opts: {
    projectId?: string | null;
    title?: string;
    description?: string;
    reporterId?: string | null;
    assigneeId?: string | null;
    stateKey?: string;
    kindKey?: string;
    priorityKey?: string;
    billingClientId?: string | null;
    parentId?: string | null;
    estimateMinutes?: number | null;
    dueDate?: string | null;
    archived?: boolean;
    updatedAt?: Date;
  } = {},
): Promise<{ id: string; humanId: string; number: number }> {
  const { randomUUID } = await import('node:crypto');
  const { assignNumber } = await import('../../src/core/tickets/numbering.ts');
  const id = randomUUID();
  const projectId = opts.projectId ?? null;
  const [meta] = await sql<{ state: string; kind: string; priority: string; key: string | null; client: string | null }[]>`
    select (select id from workflow_states where workspace_id = ${ws.id} and ${opts.stateKey ? sql`key = ${opts.stateKey}` : sql`is_default`}) as state,
           (select id from ticket_kinds where workspace_id = ${ws.id} and ${opts.kindKey ? sql`key = ${opts.kindKey}` : sql`is_inbound`}) as kind,
           (select id from priorities where workspace_id = ${ws.id} and ${opts.priorityKey ? sql`key = ${opts.priorityKey}` : sql`is_default`}) as priority,
           (select key from projects where id = ${projectId}) as key,
           (select billing_client_id from projects where id = ${projectId}) as client`;
  const at = opts.updatedAt ?? new Date();
  const number = await sql.begin(async (t) => {
    const n = await assignNumber(t as unknown as Db, ws.id, projectId, id);
    await t`
      insert into tickets (id, workspace_id, project_id, number, title, description, kind_id, state_id, priority_id, assignee_id, reporter_id,
                           billing_client_id, parent_id, estimate_minutes, due_date, archived, created_at, updated_at)
      values (${id}, ${ws.id}, ${projectId}, ${n}, ${opts.title ?? `Ticket ${n}`}, ${opts.description ?? ''}, ${meta!.kind}, ${meta!.state}, ${meta!.priority},
              ${opts.assigneeId ?? null}, ${opts.reporterId ?? null}, ${opts.billingClientId === undefined ? meta!.client : opts.billingClientId},
              ${opts.parentId ?? null}, ${opts.estimateMinutes ?? null}, ${opts.dueDate ?? null}, ${opts.archived ?? false}, ${at}, ${at})`;
    return n;
  });
  return { id, humanId: `${meta!.key ?? 'INBOX'}-${number}`, number };
}
