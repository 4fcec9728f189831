import { z } from 'zod';
import type { Db } from '../../db/connect.ts';
import { authorize } from '../access/authorize.ts';
import { isAdminRole, isClientRole, type Principal } from '../auth/principal.ts';
import type { Ctx } from '../ctx.ts';
import { billingContactSql } from '../documents/access.ts';
import { effectiveBillingPolicySql } from '../tickets/filters.ts';

type Fragment = ReturnType<Db>;

export const bankBalancesInput = z.object({
  clientId: z.uuid().optional().describe('Only the banks of this client (uuid).'),
});

/** One time bank with its balance; all figures in minutes. */
export interface BankBalance {
  id: string;
  name: string;
  clientId: string;
  clientName: string;
  /** Sum of deposits (negative deposits correct earlier ones). */
  depositedMinutes: number;
  /** Billed minutes of entries whose ticket's effective billing policy is this bank. */
  consumedMinutes: number;
  /** depositedMinutes - consumedMinutes; negative when overdrawn. */
  remainingMinutes: number;
}

/** Clients (billing or collaborating) of the projects in `projects`, a subquery of project ids. */
function clientsOfProjects(sql: Db, projects: Fragment): Fragment {
  return sql`select bp.billing_client_id from projects bp where bp.id in (${projects}) and bp.billing_client_id is not null
             union all select bc.client_id from project_collaborators bc where bc.project_id in (${projects})`;
}

/**
 * Which banks the caller may read, as a condition over banks row `b`:
 * - Owner and Admin: every bank.
 * - Project managers: banks of the clients (billing or collaborating) of the projects they manage.
 * - A client user who is a billing contact of their client with a full login: their client's banks.
 * - Anyone else: none (an empty list, not an error).
 * A token restricted to projects narrows this to the clients of those projects.
 */
function bankAccessSql(sql: Db, p: Principal): Fragment {
  let role: Fragment;
  if (isAdminRole(p.role)) role = sql`true`;
  else if (isClientRole(p.role)) role = sql`(b.client_id = ${p.clientId}::uuid and ${billingContactSql(sql, p)})`;
  else {
    const managed: Fragment = sql`select pm.project_id from project_memberships pm
                        where pm.workspace_id = ${p.workspaceId} and pm.identity_id = ${p.identityId} and pm.is_manager`;
    role = sql`b.client_id in (${clientsOfProjects(sql, managed)})`;
  }
  if (!p.projectIds) return role;
  return sql`(${role} and b.client_id in (${clientsOfProjects(sql, sql`select unnest(${p.projectIds as string[]}::uuid[])`)}))`;
}

/**
 * Balances of the time banks the caller may read, by client name then bank name. One
 * statement: deposits per bank, and the billed minutes of entries on tickets whose effective
 * billing policy (ticket, else project, else client) names the bank.
 */
export async function getBankBalances(ctx: Ctx, input: unknown): Promise<{ banks: BankBalance[] }> {
  authorize(ctx, 'banks.balances');
  const q = bankBalancesInput.parse(input ?? {});
  const { sql, principal: p } = ctx;
  const banks = await sql<BankBalance[]>`
    with visible_banks as (
      select b.id, b.name, b.client_id from banks b
      where b.workspace_id = ${p.workspaceId} and ${bankAccessSql(sql, p)}
        ${q.clientId ? sql`and b.client_id = ${q.clientId.toLowerCase()}::uuid` : sql``}
    ),
    consumed as (
      select lower(${effectiveBillingPolicySql(sql, 't')}) as policy, sum(e.minutes)::bigint as minutes
      from time_entries e join tickets t on t.id = e.ticket_id
      where e.workspace_id = ${p.workspaceId} and e.billed and exists (select 1 from visible_banks)
      group by 1
    )
    select vb.id, vb.name, vb.client_id as "clientId", c.name as "clientName",
           coalesce((select sum(d.minutes) from bank_deposits d where d.bank_id = vb.id), 0)::int as "depositedMinutes",
           coalesce((select cs.minutes from consumed cs where cs.policy = 'bank:' || vb.id::text), 0)::int as "consumedMinutes"
    from visible_banks vb join clients c on c.id = vb.client_id
    order by c.name, vb.name, vb.id`;
  return { banks: banks.map((b) => ({ ...b, remainingMinutes: b.depositedMinutes - b.consumedMinutes })) };
}
