import { z } from 'zod';
import { isClientRole, roles, type Role } from '../auth/principal.ts';
import { invalid, notFound } from '../errors.ts';
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
 * workspace role none. A membership that becomes a client one loses the billing-operator flag:
 * the flag means something for workspace users only (the database's trigger keeps that for every
 * writer; it is said here too, so the answer shows it).
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
    if (isClientRole(input.role) !== (input.clientId !== null)) {
      throw invalid('client_role_needs_client', { field: 'clientId' }, 'A client role needs the client; a workspace role takes none.');
    }
    if (input.clientId) {
      const [c] = await sql`select 1 from clients where id = ${input.clientId} and workspace_id = ${p.workspaceId}`;
      if (!c) throw notFound('unknown_client', undefined, 'No such client in this workspace.');
    }
    const [m] = await sql<{ role: Role }[]>`
    select role from memberships where workspace_id = ${p.workspaceId} and identity_id = ${input.identityId} for update`;
    if (!m) throw notFound('member_not_found', undefined, 'That person is not a member of this workspace.');
    const [row] = await sql<Omit<RoleChange, 'previousRole'>[]>`
    update memberships
    set role = ${input.role}, client_id = ${input.clientId},
        billing_operator = billing_operator and ${input.role}::text not in ('client', 'client_elevated')
    where workspace_id = ${p.workspaceId} and identity_id = ${input.identityId}
    returning identity_id as "identityId", role, client_id as "clientId", billing_operator as "billingOperator"`;
    return { ...row!, previousRole: m.role };
  },
});
