import { authorize } from '../access/authorize.ts';
import { requireScope } from '../auth/guards.ts';
import { isAdminRole, type Principal } from '../auth/principal.ts';
import { canSeeInbox } from '../access/visible.ts';
import { tx, type Ctx } from '../ctx.ts';
import { conflict, isAppError } from '../errors.ts';
import { defineOp } from '../operation.ts';
import { recordEvents, type NewEvent } from './events.ts';
import { assigneeEligible, checkAssignee, checkBillingClient, clientValidIn, loadProject, resolveWorkflow } from './fields.ts';
import { getTicketPage, type TicketPage } from './get.ts';
import { isVisible, loadTicket } from './load.ts';
import { assignNumber } from './numbering.ts';
import { humanId } from './ref.ts';
import { ticketPageSchema } from './page-schema.ts';
import { moveTicketInput, type MoveTicketFields } from './schemas.ts';
import type { ProjectFacts, TicketFacts } from '../access/facts.ts';

/**
 * POST /tickets/{ref}/move: to another project, or out of the Inbox (triage). The ticket gets a
 * new number in the target project; old numbers keep resolving (ticket_refs). Viewers, comments,
 * links and attachments belong to the ticket and travel with it; time entries keep their attribution.
 * Who may move what where is the `tickets.move` row of the action table:
 *
 * - Out of a project: a full member of both projects (Owner/Admin: any).
 * - Out of the Inbox: anyone who may triage (a token needs `triage`); the target needs no membership,
 *   so the caller may lose sight of the ticket: 409 `moved_out_of_sight`, the move committed.
 * - A billing client not valid in the target is reset only by Owner/Admin with `confirmReset: true`.
 * Its own transaction, not the operation's: whether the caller still sees the ticket is asked
 * after the move commits (409 `moved_out_of_sight` reports a move that happened).
 */
export const moveTicket = defineOp({
  name: 'tickets.move',
  action: 'tickets.move',
  input: moveTicketInput,
  output: ticketPageSchema,
  run: async (ctx, { ref, ...input }): Promise<TicketPage> => {
    const id = await tx(ctx, async (ctx) => {
      const { sql, principal: p } = ctx;
      const t = await loadForMove(ctx, ref);
      authorize(ctx, 'tickets.move', t);
      if (t.archived) throw conflict('restore_first', undefined, 'The ticket is archived; restore it first.');
      const target = await loadProject(sql, p, input.projectId);
      authorize(ctx, 'tickets.move', t, { into: target });

      const billingClientId = await nextBillingClient(ctx, t, target, input);
      if (input.kindId) await resolveWorkflow(sql, t.workspaceId, { kindId: input.kindId });
      if (input.assigneeId) await checkAssignee(sql, t.workspaceId, input.assigneeId, target.id, t.assigneeId);
      const assigneeId = input.assigneeId !== undefined ? input.assigneeId : await keptAssignee(ctx, t, target);

      const now = ctx.now();
      const events: NewEvent[] = [];
      const event = (kind: NewEvent['kind'], payload: Record<string, unknown>) =>
        events.push({ workspaceId: t.workspaceId, ticketId: t.id, kind, actorId: p.identityId, payload });

      let number = t.number;
      if (target.id !== t.projectId) {
        number = await assignNumber(sql, t.workspaceId, target.id, t.id);
        event('moved', {
          fromProjectId: t.projectId,
          toProjectId: target.id,
          fromHumanId: humanId(t.projectKey, t.number),
          toHumanId: humanId(target.key, number),
        });
      }
      const kindId = input.kindId ?? t.kindId;
      if (kindId !== t.kindId) event('field_changed', { field: 'kindId', old: t.kindId, new: kindId });
      if (assigneeId !== t.assigneeId) event('field_changed', { field: 'assigneeId', old: t.assigneeId, new: assigneeId });
      if (billingClientId !== t.billingClientId) event('field_changed', { field: 'billingClientId', old: t.billingClientId, new: billingClientId });

      await sql`
      update tickets set project_id = ${target.id}, number = ${number}, kind_id = ${kindId}, assignee_id = ${assigneeId}, billing_client_id = ${billingClientId}
      where id = ${t.id}`;
      await recordEvents(sql, events, now);
      return t.id;
    });
    if (!(await isVisible(ctx, id))) {
      throw conflict('moved_out_of_sight', undefined, 'The ticket was moved, but you can no longer see it.');
    }
    return getTicketPage(ctx, id);
  },
});

/**
 * Loads the ticket, locked. A token without `triage` does not see the Inbox, but the contract
 * answers "missing triage" with 403 for a move out of it: when the person behind the token could
 * see the ticket with triage (so nothing leaks), that is what they get.
 */
async function loadForMove(ctx: Ctx, ref: string): Promise<TicketFacts> {
  try {
    return await loadTicket(ctx, ref, { lock: true });
  } catch (err) {
    const p = ctx.principal;
    if (!isAppError(err) || err.code !== 'not_found' || p.via !== 'token' || p.scopes.has('triage')) throw err;
    const withTriage: Principal = { ...p, scopes: new Set([...p.scopes, 'triage']) };
    if (!canSeeInbox(withTriage)) throw err;
    const t = await loadTicket({ ...ctx, principal: withTriage }, ref).catch(() => null);
    if (t && t.projectId === null) requireScope(p, 'triage', 'Routing a ticket out of the Inbox needs the triage scope.');
    throw err;
  }
}

/**
 * The billing client after the move. Sent explicitly: must be valid in the target. Otherwise an
 * Inbox ticket without one takes the target's billing client; a valid one stays; an invalid one
 * (not the target's billing or collaborating client) is reset to the target's billing client,
 * which only Owner/Admin may do, and only with `confirmReset: true`.
 */
async function nextBillingClient(ctx: Ctx, t: TicketFacts, target: ProjectFacts, input: MoveTicketFields): Promise<string | null> {
  const { sql, principal: p } = ctx;
  if (input.billingClientId) await checkBillingClient(sql, t.workspaceId, input.billingClientId, target.id);
  const old = t.billingClientId;
  const oldValid = old === null || (await clientValidIn(sql, t.workspaceId, old, target.id));
  if (t.projectId !== null && !oldValid) {
    if (!isAdminRole(p.role))
      throw conflict(
        'reset_requires_admin',
        { billingClientId: old },
        'Only an owner or admin may move a ticket whose billing client the target project does not have.',
      );
    if (input.confirmReset !== true)
      throw conflict('confirm_reset', { billingClientId: old }, 'The billing client will be reset; send confirmReset: true to move anyway.');
  }
  if (input.billingClientId !== undefined) return input.billingClientId;
  if (old === null) return t.projectId === null ? target.billingClientId : null;
  return oldValid ? old : target.billingClientId;
}

/** The current assignee stays unless they cannot be assigned in the target (a client user of another client). */
async function keptAssignee(ctx: Ctx, t: TicketFacts, target: ProjectFacts): Promise<string | null> {
  if (t.assigneeId === null) return null;
  return (await assigneeEligible(ctx.sql, t.workspaceId, t.assigneeId, target.id)) ? t.assigneeId : null;
}
