import { z } from 'zod';
import type { Db } from '../../db/connect.ts';
import { isAdminRole, isClientRole, type Principal } from '../auth/principal.ts';
import { billingContactSql } from '../documents/access.ts';
import { defineOp } from '../operation.ts';
import { bankListSchema, type BankBalance } from './schema.ts';

type Fragment = ReturnType<Db>;

export const bankBalancesInput = z.object({
  clientId: z.uuid().optional().describe('Only the banks of this client (uuid).'),
});

export type { BankBalance } from './schema.ts';

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
 * Balances of the banks of a workspace that meet `filter` (a condition over banks row `b`), by
 * client name then bank name: the one balance query, for get_bank_balances and the admin bank
 * endpoints. Deposits per bank, minus the minutes of the live lines of billing runs that drew on
 * the bank: the policy recorded when a run billed the entry (a later policy change does not
 * rewrite what was billed), and a voided run's lines are no longer live, so its draw-downs return.
 */
export async function selectBankBalances(sql: Db, workspaceId: string, filter: Fragment): Promise<BankBalance[]> {
  const rows = await sql<Omit<BankBalance, 'remainingMinutes'>[]>`
    select b.id, b.name, b.client_id as "clientId", c.name as "clientName",
           coalesce((select sum(d.minutes) from bank_deposits d where d.bank_id = b.id), 0)::int as "depositedMinutes",
           coalesce((select sum(l.minutes) from billing_run_entries l where l.bank_id = b.id and l.active), 0)::int as "consumedMinutes"
    from banks b join clients c on c.id = b.client_id
    where b.workspace_id = ${workspaceId} and ${filter}
    order by c.name, b.name, b.id`;
  return rows.map((b) => ({ ...b, remainingMinutes: b.depositedMinutes - b.consumedMinutes }));
}

/** get_bank_balances: the balances of the time banks the caller may read (see bankAccessSql). */
export const getBankBalances = defineOp({
  name: 'banks.balances',
  action: 'banks.balances',
  input: bankBalancesInput,
  output: bankListSchema,
  run: async (ctx, q): Promise<{ banks: BankBalance[] }> => {
    const { sql, principal: p } = ctx;
    const byClient = q.clientId ? sql`and b.client_id = ${q.clientId.toLowerCase()}::uuid` : sql``;
    return { banks: await selectBankBalances(sql, p.workspaceId, sql`${bankAccessSql(sql, p)} ${byClient}`) };
  },
});
