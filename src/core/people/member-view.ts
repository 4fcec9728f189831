import { z } from 'zod';
import type { Db } from '../../db/connect.ts';
import { roles, type Role } from '../auth/principal.ts';
import { dateTimeOut, describing, uuidOut } from '../response-schema.ts';
import { unknownPerson } from '../resolve/people.ts';

/** A membership as an Owner or Admin manages it (PATCH /members, deactivate, reactivate). */
export interface Member {
  identityId: string;
  name: string;
  email: string | null;
  role: Role;
  clientId: string | null;
  timezone: string;
  weeklyTargetMinutes: number | null;
  categoryId: string | null;
  billingOperator: boolean;
  deactivatedAt: string | null;
}

export const memberSchema = describing<Member>()(
  z
    .object({
      identityId: uuidOut,
      name: z.string(),
      email: z.string().nullable(),
      role: z.enum(roles),
      clientId: uuidOut.nullable().describe('The client of a client user; null for a workspace user.'),
      timezone: z.string().describe('IANA time zone.'),
      weeklyTargetMinutes: z.number().int().nullable(),
      categoryId: uuidOut.nullable(),
      billingOperator: z.boolean().describe('Reads the console as a billing operator (workspace users only).'),
      deactivatedAt: dateTimeOut.nullable().describe('Set while the member is deactivated: no session or token of theirs works here.'),
    })
    .meta({ id: 'Member' }),
);

/** One member of the workspace (404 `unknown_person` when there is none), locked when `lock`. */
export async function loadMember(sql: Db, workspaceId: string, identityId: string, lock = false): Promise<Member> {
  const [m] = await sql<Member[]>`
    select m.identity_id as "identityId", person_name(m.workspace_id, i.id, i.name) as name, i.email, m.role, m.client_id as "clientId",
           m.timezone, m.weekly_target_minutes as "weeklyTargetMinutes", m.category_id as "categoryId",
           m.billing_operator as "billingOperator",
           to_char(m.deactivated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "deactivatedAt"
    from memberships m join identities i on i.id = m.identity_id
    where m.workspace_id = ${workspaceId} and m.identity_id = ${identityId}
    ${lock ? sql`for update of m` : sql``}`;
  if (!m) throw unknownPerson('subject', { identityId }, 'That person is not a member of this workspace.');
  return m;
}

/** The active owners of the workspace other than `identityId`: a workspace never loses its last one. */
export async function otherOwners(sql: Db, workspaceId: string, identityId: string): Promise<number> {
  const [r] = await sql<{ n: number }[]>`
    select count(*)::int as n from memberships
    where workspace_id = ${workspaceId} and role = 'owner' and deactivated_at is null and identity_id <> ${identityId}`;
  return r!.n;
}
