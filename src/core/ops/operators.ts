import { z } from 'zod';
import { conflict, notFound } from '../errors.ts';
import { defineOp } from '../operation.ts';
import { idField } from '../validation.ts';

/** A workspace user as the operators page lists them: who may use the console, and how. */
export interface OperatorRow {
  identityId: string;
  name: string;
  email: string | null;
  role: string;
  billingOperator: boolean;
}

/** The workspace's users (client users never use the console), owners and admins first, then by name. */
export const listOperators = defineOp({
  name: 'ops.operators.list',
  action: 'ops.read',
  input: z.object({}),
  output: null,
  run: (ctx): Promise<OperatorRow[]> => ctx.sql<OperatorRow[]>`
    select i.id as "identityId", i.name, i.email, m.role, m.billing_operator as "billingOperator"
    from memberships m join identities i on i.id = m.identity_id
    where m.workspace_id = ${ctx.principal.workspaceId} and m.role not in ('client', 'client_elevated')
    order by (m.role in ('owner', 'admin')) desc, lower(i.name), i.id`,
});

export const setBillingOperatorInput = z.object({
  identityId: idField('The workspace user.'),
  billingOperator: z.boolean().describe('Whether they read the console (read-only) as a billing operator.'),
});

/**
 * Grants or withdraws the `billingOperator` flag of a workspace user's membership (Owner/Admin,
 * browser session; audited, refusals too). A client user may never hold it: the console shows
 * every client's runs and documents. An owner's or admin's flag changes nothing they may do.
 */
export const setBillingOperator = defineOp({
  name: 'ops.operators.set',
  action: 'ops.operators.set',
  input: setBillingOperatorInput,
  output: null,
  tx: true,
  audit: {
    action: (s) => (s.billingOperator === true ? 'operator.grant' : 'operator.withdraw'),
    target: (s) => `identity ${String(s.identityId)}`,
    detail: (_, r: OperatorRow) => `${r.name}: billing operator ${r.billingOperator ? 'granted' : 'withdrawn'}`,
  },
  run: async ({ sql, principal: p }, input): Promise<OperatorRow> => {
    const [m] = await sql<{ role: string }[]>`
      select role from memberships where workspace_id = ${p.workspaceId} and identity_id = ${input.identityId} for update`;
    if (!m) throw notFound('member_not_found', undefined, 'That person is not a member of this workspace.');
    if (m.role === 'client' || m.role === 'client_elevated') {
      throw conflict('client_user', undefined, 'A client user cannot be a billing operator.');
    }
    const [row] = await sql<OperatorRow[]>`
      update memberships m set billing_operator = ${input.billingOperator}
      from identities i
      where m.workspace_id = ${p.workspaceId} and m.identity_id = ${input.identityId} and i.id = m.identity_id
      returning i.id as "identityId", i.name, i.email, m.role, m.billing_operator as "billingOperator"`;
    return row!;
  },
});
