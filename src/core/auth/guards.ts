import { forbidden, type AppError } from '../errors.ts';
import { isAdminRole, isClientRole, type Principal, type Scope } from './principal.ts';

export const REAUTH_WINDOW_MS = 10 * 60 * 1000;

/**
 * The credential and role checks behind `authorize` (src/core/access/authorize.ts), and behind the
 * few checks that depend on the input (an agent token, someone else's time): one place for
 * each reason, so every refusal carries the same details. `message` says what was refused.
 */
export function requireScope(p: Principal, scope: Scope, message?: string): void {
  if (!p.scopes.has(scope)) throw missingScope(scope, message);
}

/** The 403 of a token lacking `scope`. */
export function missingScope(scope: Scope, message = `This token lacks the ${scope} scope.`): AppError {
  return forbidden('missing_scope', { scope }, message);
}

export function requireSession(p: Principal, message = 'This operation needs a browser session.'): void {
  if (p.via !== 'session') throw forbidden('session_required', undefined, message);
}

export function requireAdmin(p: Principal, message = 'Only an owner or admin may do this.', extra?: Record<string, unknown>): void {
  if (!isAdminRole(p.role)) throw forbidden('admin_only', extra, message);
}

/** Time tracking needs a workspace user: client users never log or read time. */
export function requireStaff(p: Principal): void {
  if (isClientRole(p.role)) throw forbidden('workspace_users_only', undefined, 'Time tracking is for workspace users only.');
}

/** Owner or Admin, from a session re-authenticated within the last ten minutes. */
export function requireRecentReauth(p: Principal, now: Date): void {
  requireSession(p);
  requireAdmin(p);
  if (!p.reauthAt || now.getTime() - p.reauthAt.getTime() > REAUTH_WINDOW_MS) {
    throw forbidden('reauth_required', undefined, 'Re-authenticate to do this.');
  }
}
