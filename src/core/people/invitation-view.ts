import { z } from 'zod';
import type { Db } from '../../db/connect.ts';
import { roles, type Role } from '../auth/principal.ts';
import { dateTimeOut, describing, uuidOut } from '../response-schema.ts';

/** How long an invitation's link works (from its last send). */
export const INVITATION_DAYS = 7;

/** The roles a person may be invited as: an agent account has no email to be invited at. */
export const invitableRoles = roles.filter((r) => r !== 'agent') as Exclude<Role, 'agent'>[];

export type InvitationState = 'pending' | 'accepted' | 'revoked' | 'expired';

/** An invitation as Owners and Admins see it; never its link (only the email carries that). */
export interface Invitation {
  id: string;
  email: string;
  name: string;
  role: Role;
  clientId: string | null;
  state: InvitationState;
  invitedBy: string | null;
  createdAt: string;
  sentAt: string;
  expiresAt: string;
  acceptedAt: string | null;
  revokedAt: string | null;
}

export const invitationSchema = describing<Invitation>()(
  z
    .object({
      id: uuidOut,
      email: z.string(),
      name: z.string(),
      role: z.enum(roles),
      clientId: uuidOut.nullable().describe('The client of a client user; null for a workspace user.'),
      state: z.enum(['pending', 'accepted', 'revoked', 'expired']),
      invitedBy: uuidOut.nullable().describe('Who sent it (null once that person is gone).'),
      createdAt: dateTimeOut,
      sentAt: dateTimeOut.describe('When the email was last asked for (creation or the last resend).'),
      expiresAt: dateTimeOut.describe(`${INVITATION_DAYS} days after the last send.`),
      acceptedAt: dateTimeOut.nullable(),
      revokedAt: dateTimeOut.nullable(),
    })
    .meta({ id: 'Invitation' }),
);

export const invitationListSchema = describing<{ invitations: Invitation[] }>()(
  z.object({ invitations: z.array(invitationSchema) }).meta({ id: 'InvitationList' }),
);

/** The select list of an Invitation over `invitations i`, its state as of `now`. */
export const invitationColumns = (sql: Db, now: Date) => sql`
  i.id, i.email, i.name, i.role, i.client_id as "clientId", i.invited_by as "invitedBy",
  case when i.accepted_at is not null then 'accepted' when i.revoked_at is not null then 'revoked'
       when i.expires_at <= ${now} then 'expired' else 'pending' end as state,
  to_char(i.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "createdAt",
  to_char(i.sent_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "sentAt",
  to_char(i.expires_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "expiresAt",
  to_char(i.accepted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "acceptedAt",
  to_char(i.revoked_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "revokedAt"`;

/** One invitation of the workspace, locked for the writer's transaction; undefined when there is none. */
export async function lockInvitation(sql: Db, workspaceId: string, id: string, now: Date): Promise<Invitation | undefined> {
  const [row] = await sql<Invitation[]>`
    select ${invitationColumns(sql, now)} from invitations i where i.workspace_id = ${workspaceId} and i.id = ${id} for update`;
  return row;
}
