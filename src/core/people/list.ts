import { z } from 'zod';
import { clientOnProject } from '../access/visible.ts';
import { isAdminRole, isClientRole, roles, type Principal, type Role } from '../auth/principal.ts';
import { describing, uuidOut } from '../response-schema.ts';
import type { Db } from '../../db/connect.ts';
import { defineOp } from '../operation.ts';

export const PEOPLE_LIMIT_MAX = 200;

export const listPeopleInput = z.object({
  q: z.string().trim().max(200).optional().describe('Only people whose name or email contains this text (case-insensitive).'),
  role: z.enum(roles).optional().describe('Only people with this role.'),
  clientId: z.uuid().toLowerCase().optional().describe('Only the people of this client.'),
  limit: z.coerce.number().int().positive().max(PEOPLE_LIMIT_MAX).default(100),
});

export interface PersonListItem {
  id: string;
  name: string;
  email: string | null;
  role: Role;
  /** person or agent (an agent account). */
  kind: 'person' | 'agent';
  client: { id: string; name: string } | null;
  /** A deactivated member: still named on history, no access (src/core/people/deactivate.ts). */
  deactivated: boolean;
}

export const peopleListSchema = describing<{ people: PersonListItem[]; omitted: number }>()(
  z
    .object({
      people: z.array(
        z.object({
          id: uuidOut,
          name: z.string(),
          email: z.string().nullable(),
          role: z.enum(roles),
          kind: z.enum(['person', 'agent']).describe('agent: an agent account.'),
          client: z.object({ id: uuidOut, name: z.string() }).nullable().describe('The client of a client user.'),
          deactivated: z.boolean().describe('Named on history, without access.'),
        }),
      ),
      omitted: z.number().int().describe('Matches beyond limit.'),
    })
    .meta({ id: 'PeopleList' }),
);

type Fragment = ReturnType<Db>;

/**
 * Which memberships `m` the caller may see in a people list:
 * - workspace users see every workspace user, and the client people of clients taking part (as
 *   billing or collaborating client) in a project they can see tickets of: Owner/Admin every
 *   project, a member or agent the projects they belong to; a token's allow-list narrows that to
 *   its projects;
 * - a client_elevated user sees the people of their own client; a client user only themselves
 *   (neither learns who works at the agency, as the name resolver's choices never tell them).
 */
function visiblePeople(sql: Db, p: Principal): Fragment {
  if (p.role === 'client') return sql`m.identity_id = ${p.identityId}`;
  if (isClientRole(p.role)) return sql`m.client_id = ${p.clientId}::uuid`;
  const projects = isAdminRole(p.role)
    ? sql`select pr.id from projects pr where pr.workspace_id = ${p.workspaceId}`
    : sql`select pm.project_id from project_memberships pm where pm.identity_id = ${p.identityId} and pm.workspace_id = ${p.workspaceId}`;
  const allowed = p.projectIds ? sql`and pr.id = any(${p.projectIds as string[]}::uuid[])` : sql``;
  return sql`(m.client_id is null or exists (
    select 1 from projects pr where pr.workspace_id = ${p.workspaceId} and pr.id in (${projects}) ${allowed}
      and ${clientOnProject(sql, 'pr', sql`m.client_id`)}))`;
}

/**
 * GET /people and list_people: the people the caller may see (see visiblePeople), by name,
 * optionally filtered by role, client, and text in their name or email. `omitted` counts matches
 * beyond `limit`. The filters only narrow what visibility allows.
 */
export const listPeople = defineOp({
  name: 'people.list',
  action: 'people.list',
  input: listPeopleInput,
  output: peopleListSchema,
  run: async (ctx, q): Promise<{ people: PersonListItem[]; omitted: number }> => {
    const { sql, principal: p } = ctx;
    const text = q.q ? `%${q.q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
    const rows = await sql<(PersonListItem & { total: number })[]>`
    select i.id, person_name(m.workspace_id, i.id, i.name) as name, i.email, m.role, i.kind,
           case when c.id is null then null else json_build_object('id', c.id, 'name', c.name) end as client,
           m.deactivated_at is not null as deactivated, count(*) over ()::int as total
    from memberships m
    join identities i on i.id = m.identity_id
    left join clients c on c.id = m.client_id
    where m.workspace_id = ${p.workspaceId} and ${visiblePeople(sql, p)}
      ${q.role ? sql`and m.role = ${q.role}` : sql``}
      ${q.clientId ? sql`and m.client_id = ${q.clientId}::uuid` : sql``}
      ${text ? sql`and (lower(person_name(m.workspace_id, i.id, i.name)) like ${text} or lower(coalesce(i.email, '')) like ${text})` : sql``}
    order by lower(person_name(m.workspace_id, i.id, i.name)), i.id
    limit ${q.limit}`;
    const total = rows[0]?.total ?? 0;
    return { people: rows.map(({ total: _t, ...person }) => person), omitted: Math.max(0, total - rows.length) };
  },
});
