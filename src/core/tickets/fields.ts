import type { Db } from '../../db/connect.ts';
import type { ProjectFacts } from '../access/facts.ts';
import { clientOnProject } from '../access/visible.ts';
import { isClientRole, type Principal } from '../auth/principal.ts';
import { invalid, notFound } from '../errors.ts';
import { clientStates } from '../access/permissions.ts';
import { unknownPerson } from '../resolve/people.ts';

/**
 * Lookups and checks shared by create, update and move: workflow ids, labels, people,
 * billing clients, projects and parents. Each throws the contract's reason with the field.
 */

export interface ResolvedWorkflow {
  kindId: string;
  stateId: string;
  stateCategory: 'open' | 'closed';
  /** The state is one a client user may pick (see clientStates). */
  stateClientAllowed: boolean;
  priorityId: string;
}

type WorkflowRow = {
  kind: string | null;
  state: string | null;
  category: 'open' | 'closed' | null;
  defaultStateId: string | null;
  customerResolveStateId: string | null;
  priority: string | null;
};

/**
 * Resolves kind, state and priority in one query: a given id must belong to the workspace,
 * an omitted one takes the workspace default (inbound kind, default state, default priority).
 */
export async function resolveWorkflow(
  sql: Db,
  workspaceId: string,
  ids: { kindId?: string | undefined; stateId?: string | undefined; priorityId?: string | undefined },
): Promise<ResolvedWorkflow> {
  const [row] = await sql<WorkflowRow[]>`
    select (select k.id from ticket_kinds k where k.workspace_id = ${workspaceId} and ${ids.kindId ? sql`k.id = ${ids.kindId}::uuid` : sql`k.is_inbound`}) as kind,
           s.id as state, s.category,
           (select ws.id from workflow_states ws where ws.workspace_id = ${workspaceId} and ws.is_default) as "defaultStateId",
           (select ws.id from workflow_states ws where ws.workspace_id = ${workspaceId} and ws.is_customer_resolve) as "customerResolveStateId",
           (select p.id from priorities p where p.workspace_id = ${workspaceId} and ${ids.priorityId ? sql`p.id = ${ids.priorityId}::uuid` : sql`p.is_default`}) as priority
    from (select 1) one
    left join workflow_states s on s.workspace_id = ${workspaceId} and ${ids.stateId ? sql`s.id = ${ids.stateId}::uuid` : sql`s.is_default`}`;
  if (!row?.kind) throw invalid('unknown_kind', { field: 'kindId' }, 'No such ticket kind in this workspace.');
  if (!row.state) throw invalid('unknown_state', { field: 'stateId' }, 'No such workflow state in this workspace.');
  if (!row.priority) throw invalid('unknown_priority', { field: 'priorityId' }, 'No such priority in this workspace.');
  return {
    kindId: row.kind,
    stateId: row.state,
    stateCategory: row.category!,
    stateClientAllowed: clientStates(row).includes(row.state),
    priorityId: row.priority,
  };
}

/** Every label id must be a label of the workspace; returns the ids deduplicated and sorted. */
export async function checkLabels(sql: Db, workspaceId: string, labelIds: string[]): Promise<string[]> {
  const ids = [...new Set(labelIds)].sort();
  if (ids.length === 0) return ids;
  const found = await sql<{ id: string }[]>`select id from labels where workspace_id = ${workspaceId} and id = any(${ids}::uuid[])`;
  const known = new Set(found.map((r) => r.id));
  const missing = ids.find((l) => !known.has(l));
  if (missing) throw invalid('unknown_label', { field: 'labelIds', labelId: missing }, 'No such label in this workspace.');
  return ids;
}

/**
 * An assignee is an active workspace user (owner, admin, member, agent) of the workspace, or an
 * elevated client user whose client bills or collaborates on the project. Nobody else: a
 * deactivated member is refused like an unknown one, unless they are `current`, the ticket's
 * assignee already (an edit that resends the field keeps them; history keeps their name).
 */
export async function checkAssignee(sql: Db, workspaceId: string, identityId: string, projectId: string | null, current?: string | null): Promise<void> {
  const m = await assigneeRow(sql, workspaceId, identityId, projectId);
  if (!m || (m.deactivated && identityId !== current)) throw unknownPerson('fieldValue', { field: 'assigneeId' });
  if (!m.eligible) throw invalid('assignee_ineligible', { field: 'assigneeId' }, 'This person cannot be assigned to a ticket of this project.');
}

/** Whether an identity may stay assigned to a ticket of the given project (see checkAssignee; deactivation does not unassign). */
export async function assigneeEligible(sql: Db, workspaceId: string, identityId: string, projectId: string | null): Promise<boolean> {
  const m = await assigneeRow(sql, workspaceId, identityId, projectId);
  return m?.eligible === true;
}

async function assigneeRow(sql: Db, workspaceId: string, identityId: string, projectId: string | null) {
  const [m] = await sql<{ eligible: boolean; deactivated: boolean }[]>`
    select m.role in ('owner', 'admin', 'member', 'agent')
           or (m.role = 'client_elevated' and ${projectId}::uuid is not null
               and exists (select 1 from projects p where p.id = ${projectId}::uuid and ${clientOnProject(sql, 'p', sql`m.client_id`)})) as eligible,
           m.deactivated_at is not null as deactivated
    from memberships m where m.workspace_id = ${workspaceId} and m.identity_id = ${identityId}`;
  return m;
}

/**
 * Whether a client may be billed for work in a project: the project's billing client or one of
 * its collaborating clients. In the Inbox (no project) any client of the workspace is allowed;
 * triage settles it on the way out.
 */
export async function clientValidIn(sql: Db, workspaceId: string, clientId: string, projectId: string | null): Promise<boolean> {
  const [row] = await sql<{ ok: boolean }[]>`
    select ${
      projectId
        ? sql`exists (select 1 from projects p where p.id = ${projectId}::uuid and ${clientOnProject(sql, 'p', clientId)})`
        : sql`exists (select 1 from clients c where c.id = ${clientId}::uuid and c.workspace_id = ${workspaceId})`
    } as ok`;
  return Boolean(row?.ok);
}

/**
 * Checks a billing client for a ticket in `projectId`. With `unknownReason`, a client that is
 * not in the workspace at all gets that reason (PATCH: `unknown_client`); else it is out of scope.
 */
export async function checkBillingClient(sql: Db, workspaceId: string, clientId: string, projectId: string | null, unknownReason?: string): Promise<void> {
  if (unknownReason) {
    const [c] = await sql`select 1 from clients where id = ${clientId} and workspace_id = ${workspaceId}`;
    if (!c) throw invalid(unknownReason, { field: 'billingClientId' }, 'No such client in this workspace.');
  }
  if (!(await clientValidIn(sql, workspaceId, clientId, projectId))) {
    throw invalid('billing_client_scope', { field: 'billingClientId' }, "The billing client must be the project's billing client or a collaborating client.");
  }
}

/**
 * A `bank:<id>` billing policy names a bank of this workspace (else 400 `unknown_bank`; the
 * database refuses it too, as a foreign-key error) belonging to the ticket's billing client when
 * it has one (else 400 `bank_client_mismatch`: a run would bill such work as paid rather than draw
 * on another client's bank). Internal work (no billing client) is never billed, so any bank passes.
 */
export async function checkBillingBank(sql: Db, workspaceId: string, policy: string, billingClientId: string | null): Promise<void> {
  if (!policy.toLowerCase().startsWith('bank:')) return;
  const [bank] = await sql<{ clientId: string }[]>`
    select client_id as "clientId" from banks where id = ${policy.slice(5).toLowerCase()}::uuid and workspace_id = ${workspaceId}`;
  if (!bank) throw invalid('unknown_bank', { field: 'billingPolicy' }, 'No such bank in this workspace.');
  if (billingClientId && bank.clientId !== billingClientId) {
    throw invalid('bank_client_mismatch', { field: 'billingPolicy' }, "The bank belongs to another client than the ticket's billing client.");
  }
}

/**
 * Loads a project the caller may address. Unknown, another workspace's, or (for client users)
 * not one of their client's projects: 404 `unknown_project`. Workspace users address every
 * project of the workspace; whether they may act on it is the caller's check (403).
 */
export async function loadProject(sql: Db, p: Principal, projectId: string, opts: { lock?: boolean } = {}): Promise<ProjectFacts> {
  const [row] = await sql<ProjectFacts[]>`
    select pr.id, pr.key, pr.billing_client_id as "billingClientId", pm.access, pr.archived_at is not null as archived,
           ${p.clientId ? clientOnProject(sql, 'pr', p.clientId) : sql`false`} as "clientOnProject"
    from projects pr
    left join project_memberships pm on pm.project_id = pr.id and pm.identity_id = ${p.identityId}
    where pr.id = ${projectId} and pr.workspace_id = ${p.workspaceId}
    ${opts.lock ? sql`for update of pr` : sql``}`;
  if (!row || (isClientRole(p.role) && !row.clientOnProject)) throw notFound('unknown_project', { field: 'projectId' }, 'No such project.');
  return row;
}
