import { requireAdmin, requireRecentReauth, requireScope, requireSession, requireStaff } from '../auth/guards.ts';
import type { Ctx } from '../ctx.ts';
import { forbidden } from '../errors.ts';
import type { TicketFacts } from '../tickets/load.ts';
import { ticketPermissions, type TicketPermissions } from '../tickets/permissions.ts';
import { ACTIONS, type Action, type Requirement } from './actions.ts';

/**
 * Asserts that the caller may perform `action` (see ACTIONS), throwing the contract's 403 with
 * its reason. Every core operation calls it first; one acting on a ticket calls it again with
 * the ticket once loaded (so a hidden ticket is 404 before any role check), and gets back the
 * ticket's permissions, computed once, for the checks that depend on the input.
 */
export function authorize(ctx: Pick<Ctx, 'principal' | 'now'>, action: Action, ticket: TicketFacts): TicketPermissions;
export function authorize(ctx: Pick<Ctx, 'principal' | 'now'>, action: Action): void;
export function authorize(ctx: Pick<Ctx, 'principal' | 'now'>, action: Action, ticket?: TicketFacts): TicketPermissions | void {
  const r: Requirement = ACTIONS[action];
  const p = ctx.principal;
  if (r.session || r.reauth) requireSession(p);
  if (r.scope) requireScope(p, r.scope);
  if (r.staff) requireStaff(p);
  if (r.ticket && !ticket) return;
  if (r.reauth) requireRecentReauth(p, ctx.now());
  if (r.admin) requireAdmin(p);
  if (!ticket) return;
  const perms = ticketPermissions(p, ticket);
  const rule = r.ticket;
  if (typeof rule === 'object' && !perms[rule.allows]) throw forbidden(rule.reason, undefined, rule.message);
  return perms;
}
