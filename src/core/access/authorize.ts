import { requireAdmin, requireRecentReauth, requireScope, requireSession, requireStaff } from '../auth/guards.ts';
import type { Principal } from '../auth/principal.ts';
import type { Ctx } from '../ctx.ts';
import { AppError, forbidden } from '../errors.ts';
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
  assertCredential(p, r);
  if (r.ticket && !ticket) return;
  if (r.reauth) requireRecentReauth(p, ctx.now());
  if (r.admin) requireAdmin(p);
  if (!ticket) return;
  const perms = ticketPermissions(p, ticket);
  const rule = r.ticket;
  if (typeof rule === 'object' && !perms[rule.allows]) throw forbidden(rule.reason, undefined, rule.message);
  return perms;
}

/**
 * The checks that need neither a ticket nor the clock, in the contract's order: credential
 * (session or scope), workspace users only, and the role where it alone decides (an action on a
 * ticket checks the role only once the ticket is known visible).
 */
function assertCredential(p: Principal, r: Requirement): void {
  if (r.session || r.reauth) requireSession(p);
  if (r.scope) requireScope(p, r.scope);
  if (r.staff) requireStaff(p);
  if (r.admin && !r.ticket) requireAdmin(p);
}

/** What an action requires of its caller (scope, session, role): the row of the action table. */
export function requirementsOf(action: Action): Requirement {
  return ACTIONS[action];
}

/** Why a principal's credential or role can never perform an action: the 403 `authorize` would throw. */
export interface AccessRefusal {
  reason: string;
  details: Record<string, unknown>;
  message: string;
}

/**
 * Whether `p` can ever perform `action`, asked without a ticket (what a tool listing or a menu
 * needs): null when some ticket or input could allow it, else the refusal `authorize` would
 * throw, with the same reason and details. Re-authentication is not asked: it expires.
 */
export function can(p: Principal, action: Action): AccessRefusal | null {
  try {
    assertCredential(p, ACTIONS[action]);
    return null;
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'forbidden') throw err;
    const { reason = 'forbidden', ...details } = err.details ?? {};
    return { reason, details, message: err.message };
  }
}
