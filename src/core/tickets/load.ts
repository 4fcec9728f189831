import { clientOnProject, visibleTicket } from '../access/visible.ts';
import type { Ctx } from '../ctx.ts';
import { notFound } from '../errors.ts';
import type { TicketFacts } from '../access/facts.ts';
import type { Fragment } from './summary.ts';
import { humanIdTicketSql, parseTicketRef } from './ref.ts';

/**
 * Loads a visible ticket by `{ref}` with the facts its permissions depend on, in one query.
 * `lock` takes a row lock for a write that depends on what was read; `mark` (a read mark's SQL,
 * reads/remembered.ts) is selected in the same snapshot as `readMark`.
 */
export async function loadTicket(ctx: Ctx, ref: string, opts: { lock?: boolean; mark?: Fragment | null } = {}): Promise<TicketFacts & { readMark?: string }> {
  const { sql, principal: p } = ctx;
  const r = parseTicketRef(ref);
  if (r.kind === 'none') throw notFound();
  const where = r.kind === 'id' ? sql`t.id = ${r.id}` : sql`t.id = (${humanIdTicketSql(sql, p.workspaceId, r)})`;
  const [row] = await sql<(TicketFacts & { readMark?: string })[]>`
    select t.id, t.workspace_id as "workspaceId", t.project_id as "projectId", pr.key as "projectKey", t.number, t.title,
           t.state_id as "stateId", s.category as "stateCategory", t.kind_id as "kindId", t.priority_id as "priorityId",
           t.assignee_id as "assigneeId", t.reporter_id as "reporterId", t.billing_client_id as "billingClientId",
           pr.billing_client_id as "projectBillingClientId", t.parent_id as "parentId", t.estimate_minutes as "estimateMinutes",
           t.archived, t.redacted_at is not null as redacted, t.updated_at as "updatedAt",
           pm.access as "memberAccess",
           ${p.clientId ? sql`coalesce(${clientOnProject(sql, 'pr', p.clientId)}, false)` : sql`false`} as "clientOnProject",
           exists (select 1 from tickets c where c.parent_id = t.id) as "hasChildren",
           array(select ws.id from workflow_states ws where ws.workspace_id = t.workspace_id order by ws.position) as "stateIds",
           (select ws.id from workflow_states ws where ws.workspace_id = t.workspace_id and ws.is_default) as "defaultStateId",
           (select ws.id from workflow_states ws where ws.workspace_id = t.workspace_id and ws.is_customer_resolve) as "customerResolveStateId"
           ${opts.mark ? sql`, ${opts.mark} as "readMark"` : sql``}
    from tickets t
    join workflow_states s on s.id = t.state_id
    left join projects pr on pr.id = t.project_id
    left join project_memberships pm on pm.project_id = t.project_id and pm.identity_id = ${p.identityId}
    where ${where} and ${visibleTicket(sql, p)}
    ${opts.lock ? sql`for update of t` : sql``}`;
  if (!row) throw notFound(undefined, undefined, 'No such ticket.');
  return row;
}

/** Whether a ticket id is visible to the caller (for link targets, parents, etc.). */
export async function isVisible(ctx: Ctx, ticketId: string): Promise<boolean> {
  const { sql } = ctx;
  const [row] = await sql`select 1 from tickets t where t.id = ${ticketId} and ${visibleTicket(sql, ctx.principal)}`;
  return Boolean(row);
}
