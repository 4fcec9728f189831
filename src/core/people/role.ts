import { z } from 'zod';
import { isClientRole, roles, type Role } from '../auth/principal.ts';
import { conflict, forbidden } from '../errors.ts';
import { unknownPerson } from '../resolve/people.ts';
import { assertRoleAndClient } from './invite.ts';
import { otherOwners } from './member-view.ts';
import { defineOp } from '../operation.ts';
import { idField } from '../validation.ts';

export const changeRoleInput = z.object({
  identityId: idField('The member whose role changes.'),
  role: z.enum(roles).describe('The new role.'),
  clientId: z.uuid().toLowerCase().nullable().default(null).describe('The client of a client user (client roles only); null for a workspace user.'),
});

export interface RoleChange {
  identityId: string;
  previousRole: Role;
  role: Role;
  clientId: string | null;
  billingOperator: boolean;
}

/**
 * Changes a member's role (Owner/Admin, a browser session or the CLI; audited as `member.role`
 * with the door it came through, refusals too). A client role needs a client of the workspace, a
 * workspace role none; only an Owner makes or unmakes an Owner, and the last active Owner stays
 * one (409 `last_owner`). A membership that becomes a client one loses the workspace-only rights:
 * the billing-operator flag (the database's trigger keeps that for every writer; it is said here
 * too, so the answer shows it) and its project memberships (time and tickets stay).
 */
export const changeRole = defineOp({
  name: 'members.role',
  action: 'members.role',
  input: changeRoleInput,
  // no REST route: the CLI prints the RoleChange as it is
  output: null,
  tx: true,
  audit: {
    action: 'member.role',
    target: (sent) => `identity ${String(sent.identityId)}`,
    detail: (_input, r: RoleChange) => `${r.previousRole} -> ${r.role}${r.clientId ? ` (client ${r.clientId})` : ''}`,
  },
  run: async (ctx, input): Promise<RoleChange> => {
    const { sql, principal: p } = ctx;
    await assertRoleAndClient(ctx, input.role, input.clientId);
    const [m] = await sql<{ role: Role }[]>`
    select role from memberships where workspace_id = ${p.workspaceId} and identity_id = ${input.identityId} for update`;
    if (!m) throw unknownPerson('subject', { identityId: input.identityId }, 'That person is not a member of this workspace.');
    if (m.role === 'owner' && input.role !== 'owner') {
      if (p.role !== 'owner') throw forbidden('owner_only', { field: 'role' }, "Only an owner may change an owner's role.");
      if ((await otherOwners(sql, p.workspaceId, input.identityId)) === 0)
        throw conflict('last_owner', { field: 'role' }, 'The workspace keeps at least one active owner.');
    }
    // project memberships are a workspace user's: a client user sees projects through their client
    if (isClientRole(input.role) && !isClientRole(m.role)) {
      await sql`delete from project_memberships where workspace_id = ${p.workspaceId} and identity_id = ${input.identityId}`;
    }
    const [row] = await sql<Omit<RoleChange, 'previousRole'>[]>`
    update memberships
    set role = ${input.role}, client_id = ${input.clientId},
        billing_operator = billing_operator and ${input.role}::text not in ('client', 'client_elevated')
    where workspace_id = ${p.workspaceId} and identity_id = ${input.identityId}
    returning identity_id as "identityId", role, client_id as "clientId", billing_operator as "billingOperator"`;
    return { ...row!, previousRole: m.role };
  },
});
