import { requireAdmin, requireRecentReauth, requireScope, requireSession, requireStaff } from '../auth/guards.ts';
import { isClientRole, type Principal } from '../auth/principal.ts';
import type { Ctx } from '../ctx.ts';
import { AppError, forbidden } from '../errors.ts';
import { SUBJECT_PERMISSIONS, ticketPermissions, type Subject, type SubjectPermission, type TicketPermissions } from './permissions.ts';
import { ACTIONS, type Action, type Requirement, type TicketRule } from './actions.ts';
import { assertPlacement } from './placement.ts';
import type { TicketFacts } from './facts.ts';

/**
 * Asserts that the caller may perform `action` (see ACTIONS), throwing the contract's 403 with
 * its reason. Every core operation calls it first; one acting on a ticket calls it again with
 * the ticket once loaded (so a hidden ticket is 404 before any role check), and gets back the
 * ticket's permissions, computed once, for the checks that depend on the input. `subject` is what
 * the action's rules read from the input: a rule over a subject (an audience, a viewer) is checked
 * with it, and an `into` action checks the placement once `subject.into` is given (create passes
 * `null` for the ticket it has not made yet).
 */
export function authorize(ctx: Pick<Ctx, 'principal' | 'now'>, action: Action, ticket: TicketFacts, subject?: Subject): TicketPermissions;
export function authorize(ctx: Pick<Ctx, 'principal' | 'now'>, action: Action, ticket?: null, subject?: Subject): void;
export function authorize(ctx: Pick<Ctx, 'principal' | 'now'>, action: Action, ticket?: TicketFacts | null, subject: Subject = {}): TicketPermissions | void {
  const r: Requirement = ACTIONS[action];
  const p = ctx.principal;
  assertCredential(p, r);
  if (ticket === undefined && (r.ticket || r.into)) return;
  if (r.reauth) requireRecentReauth(p, ctx.now());
  if (r.admin && !flagged(p, r)) requireAdmin(p);
  let perms: TicketPermissions | undefined;
  if (ticket) {
    perms = ticketPermissions(p, ticket);
    if (typeof r.ticket === 'object') assertTicketRule(p, ticket, perms, r.ticket, subject);
  }
  if (r.into && subject.into !== undefined) assertPlacement(p, subject.into, { triage: ticket?.projectId === null, from: ticket?.projectId });
  return perms;
}

/**
 * Whether the ticket rule of `action` holds for the caller on this ticket and subject, credential
 * not asked: what a page offers beside `permissions` (a viewer's `canRemove` is `viewers.remove`'s).
 */
export function ticketRuleHolds(p: Principal, action: Action, t: TicketFacts, perms: TicketPermissions, subject: Subject = {}): boolean {
  const rule = requirementsOf(action).ticket;
  return typeof rule !== 'object' || permits(p, t, perms, rule.allows, subject);
}

/** Whether a ticket rule holds: its permission entry, or its subject permission over what the action names. */
function permits(p: Principal, t: TicketFacts, perms: TicketPermissions, allows: TicketRule['allows'], subject: Subject): boolean {
  return isSubjectPermission(allows) ? SUBJECT_PERMISSIONS[allows](perms, p, t, subject) : perms[allows];
}

const isSubjectPermission = (allows: TicketRule['allows']): allows is SubjectPermission => Object.hasOwn(SUBJECT_PERMISSIONS, allows);

/** The rule's 403 when it does not hold (client users get the rule's `clients` refusal where it has one). */
function assertTicketRule(p: Principal, t: TicketFacts, perms: TicketPermissions, rule: TicketRule, subject: Subject): void {
  if (permits(p, t, perms, rule.allows, subject)) return;
  if (rule.clients && isClientRole(p.role)) throw forbidden(rule.clients.reason, undefined, rule.clients.message);
  const message = typeof rule.message === 'function' ? rule.message(subject) : rule.message;
  throw forbidden(rule.reason, rule.details?.(t, subject), message);
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
  if (r.admin && !r.ticket && !flagged(p, r)) requireAdmin(p);
}

/**
 * The membership flag that stands in for the admin role on this action, held by the caller, who
 * must be a workspace user: a flag left on a membership that became a client one grants nothing.
 */
const flagged = (p: Principal, r: Requirement): boolean => r.orFlag !== undefined && p.flags?.has(r.orFlag) === true && !isClientRole(p.role);

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
