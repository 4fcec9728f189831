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
