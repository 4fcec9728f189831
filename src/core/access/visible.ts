import type { Db } from '../../db/connect.ts';
import { isAdminRole, isClientRole, type Principal } from '../auth/principal.ts';
import { canUseInbox } from './placement.ts';

type Fragment = ReturnType<Db>;

/**
 * The SQL condition "the principal may see ticket `t`", composed into every query that
 * touches tickets (never filtered in JavaScript afterwards). `alias` names the tickets row.
 *
 * - owner, admin: every ticket, the Inbox included
 * - member, agent: tickets of their projects, Inbox tickets, and tickets where they are reporter, assignee or viewer
 * - client_elevated: tickets of projects whose billing or collaborating client is theirs, plus reported/viewed ones
 * - client: tickets they reported, are assigned to, or view
 * A token narrows this: without `triage` no Inbox; with an allow-list only those projects.
 */
export function visibleTicket(sql: Db, p: Principal, alias = 't', opts: { extraViewers?: Fragment } = {}): Fragment {
  const t = sql(alias);
  const me = p.identityId;
  const current = sql`exists (select 1 from ticket_viewers v where v.ticket_id = ${t}.id and v.identity_id = ${me})`;
  // extraViewers: viewer ids not (or no longer) in ticket_viewers, e.g. the change feed's prior state
  const viewer = opts.extraViewers ? sql`(${current} or ${me}::uuid = any(${opts.extraViewers}))` : current;
  let role: Fragment;
  switch (p.role) {
    case 'owner':
    case 'admin':
      role = sql`true`;
      break;
    case 'member':
    case 'agent':
      role = sql`(${t}.project_id is null
        or ${t}.project_id in (${memberProjects(sql, p)})
        or ${t}.reporter_id = ${me} or ${t}.assignee_id = ${me} or ${viewer})`;
      break;
    case 'client_elevated':
      role = sql`(${t}.project_id in (${clientProjects(sql, p.clientId!)}) or ${t}.reporter_id = ${me} or ${viewer})`;
      break;
    case 'client':
      role = sql`(${t}.reporter_id = ${me} or ${t}.assignee_id = ${me} or ${viewer})`;
      break;
  }
  return sql`(${t}.workspace_id = ${p.workspaceId} and ${role}${tokenNarrowing(sql, p, alias)})`;
}

/**
 * "Client `clientId` takes part in project row `project`": it is the project's billing client or
 * a collaborating client. `clientId` is a bound id, or a column given as a fragment (`m.client_id`).
 */
export function clientOnProject(sql: Db, project: string, clientId: string | Fragment): Fragment {
  const pr = sql(project);
  return sql`(${pr}.billing_client_id = ${clientId}::uuid
              or exists (select 1 from project_collaborators pc where pc.project_id = ${pr}.id and pc.client_id = ${clientId}::uuid))`;
}

/** Projects a workspace user is a member of, as a set: every ticket of them is theirs to see. */
export function memberProjects(sql: Db, p: Principal): Fragment {
  return sql`select pm.project_id from project_memberships pm where pm.identity_id = ${p.identityId} and pm.workspace_id = ${p.workspaceId}`;
}

/** Projects a client takes part in, as a set (see clientOnProject): as billing client or as collaborating client. */
export function clientProjects(sql: Db, clientId: string): Fragment {
  return sql`select p.id from projects p where p.billing_client_id = ${clientId}
             union all select pc.project_id from project_collaborators pc where pc.client_id = ${clientId}`;
}

/**
 * Condition over projects row `alias`: the projects the caller may name and be told about (project
 * lists, name matching, the choices of an unknown project): Owner and Admin every project; a member
 * or agent the projects they belong to; a client user their client's; a token's allow-list narrows
 * that further. A key always resolves (an Inbox triage may route a ticket anywhere); this only
 * decides what is listed.
 */
export function addressableProject(sql: Db, p: Principal, alias: string): Fragment {
  const pr = sql(alias);
  let role: Fragment;
  if (isAdminRole(p.role)) role = sql`true`;
  else if (isClientRole(p.role)) role = sql`${pr}.id in (${clientProjects(sql, p.clientId!)})`;
  else role = sql`exists (select 1 from project_memberships apm where apm.project_id = ${pr}.id and apm.identity_id = ${p.identityId})`;
  return p.projectIds ? sql`(${role} and ${pr}.id = any(${p.projectIds as string[]}::uuid[]))` : role;
}

/** A token without `triage` never sees the Inbox; a project allow-list keeps to its projects. */
function tokenNarrowing(sql: Db, p: Principal, alias: string): Fragment {
  const t = sql(alias);
  if (p.projectIds) return sql` and ${t}.project_id = any(${p.projectIds as string[]}::uuid[])`;
  if (!p.scopes.has('triage')) return sql` and ${t}.project_id is not null`;
  return sql``;
}

/** Whether the principal may see the Inbox at all (owner/admin/member/agent with triage, no allow-list): the Inbox rule of placement.ts. */
export function canSeeInbox(p: Principal): boolean {
  return canUseInbox(p);
}

/**
 * For an ordinary client user, a superset of what `visibleTicket` admits (tickets they reported,
 * are assigned to or view) as an id array computed once per statement, so their lists start
 * from their few tickets instead of walking the workspace. `true` for every other role. It only
 * narrows: `visibleTicket` must still be applied. Keep it in step with the client rule above.
 */
export function visibilityCandidates(sql: Db, p: Principal, alias = 't'): Fragment {
  if (p.role !== 'client') return sql`true`;
  const t = sql(alias);
  const me = p.identityId;
  return sql`${t}.id = any(array(
    select c.id from tickets c where c.reporter_id = ${me}::uuid and c.workspace_id = ${p.workspaceId}
    union select c.id from tickets c where c.assignee_id = ${me}::uuid and c.workspace_id = ${p.workspaceId}
    union select v.ticket_id from ticket_viewers v where v.identity_id = ${me}::uuid))`;
}
