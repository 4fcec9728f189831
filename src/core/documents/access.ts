import type { Db } from '../../db/connect.ts';
import { isAdminRole, isClientRole, type Principal } from '../auth/principal.ts';
import type { Ctx } from '../ctx.ts';

type Fragment = ReturnType<Db>;

/** The widest download rule in force for a caller (DocumentList.scope). */
export type DocumentScope = 'all' | 'client' | 'projects' | 'none';

export interface DocumentRule {
  scope: DocumentScope;
  /** Condition over documents row `d`: the caller may download it. */
  where: Fragment;
}

/**
 * SQL condition "identity `me` is a billing contact of client `clientId` with a full login": a
 * client user of that client, listed as a billing recipient of it, who can log in (an elevated
 * client user, or an ordinary one with a password: people created from email intake have none).
 */
export function billingContactSql(sql: Db, p: Principal): Fragment {
  if (!isClientRole(p.role) || !p.clientId) return sql`false`;
  return sql`exists (
    select 1 from memberships m
    join identities i on i.id = m.identity_id
    join client_billing_recipients r on r.client_id = m.client_id and r.identity_id = m.identity_id
    where m.workspace_id = ${p.workspaceId} and m.identity_id = ${p.identityId} and m.client_id = ${p.clientId}::uuid
      and (m.role = 'client_elevated' or i.password_hash is not null))`;
}

interface RuleFacts {
  contact: boolean;
  grantClientIds: string[];
  managedProjectIds: string[];
}

/**
 * The contract's download rule, the same for every document route:
 * - Owner and Admin: every document (`all`).
 * - A client user: their own client's documents, only as a billing contact with a full login (`client`),
 *   and never one held for review whose run is not approved yet (issue 23).
 * - A workspace user: every document of clients they hold a document grant for (`client`), and the
 *   project-scoped documents of projects they manage (`projects`). A combined document spans
 *   projects, so managing one project does not open it.
 * - A token restricted to projects: only project-scoped documents of those projects, within the
 *   above (`projects`).
 * One statement reads the caller's grants, managed projects and contact status.
 */
export async function documentRule(ctx: Ctx): Promise<DocumentRule> {
  const { sql, principal: p } = ctx;
  const [facts] = await sql<RuleFacts[]>`
    select ${billingContactSql(sql, p)} as contact,
           array(select g.client_id::text from document_grants g where g.workspace_id = ${p.workspaceId} and g.identity_id = ${p.identityId}
                   and ${isClientRole(p.role) ? sql`false` : sql`true`}) as "grantClientIds",
           array(select pm.project_id::text from project_memberships pm where pm.workspace_id = ${p.workspaceId} and pm.identity_id = ${p.identityId}
                   and pm.is_manager and ${isClientRole(p.role) ? sql`false` : sql`true`}) as "managedProjectIds"`;
  const f = facts!;
  let scope: DocumentScope;
  let where: Fragment;
  if (isAdminRole(p.role)) {
    scope = 'all';
    where = sql`true`;
  } else if (isClientRole(p.role)) {
    scope = f.contact ? 'client' : 'none';
    where = f.contact ? sql`(d.client_id = ${p.clientId}::uuid and not ${heldForReview(sql)})` : sql`false`;
  } else {
    scope = f.grantClientIds.length > 0 ? 'client' : f.managedProjectIds.length > 0 ? 'projects' : 'none';
    where = sql`(d.client_id = any(${f.grantClientIds}::uuid[]) or (d.scope = 'project' and d.project_id = any(${f.managedProjectIds}::uuid[])))`;
  }
  if (p.projectIds && scope !== 'none') {
    scope = 'projects';
    where = sql`(${where} and d.scope = 'project' and d.project_id = any(${p.projectIds as string[]}::uuid[]))`;
  }
  return { scope, where: scope === 'none' ? sql`false` : where };
}

/** SQL condition over documents row `d`: its timesheet is held for review and its run not approved yet (issue 23). */
const heldForReview = (sql: Db): Fragment => sql`exists (
  select 1 from timesheets hs join billing_runs hr on hr.id = hs.run_id
  where hs.id = d.timesheet_id and hs.review and hr.approved_at is null)`;
