import { forbidden } from '../errors.ts';
import { isAdminRole, type Principal, type Scope } from './principal.ts';

export const REAUTH_WINDOW_MS = 10 * 60 * 1000;

export function requireScope(p: Principal, scope: Scope): void {
  if (!p.scopes.has(scope)) throw forbidden('missing_scope', { scope }, `This token lacks the ${scope} scope.`);
}

export function requireSession(p: Principal): void {
  if (p.via !== 'session') throw forbidden('session_required', undefined, 'This operation needs a browser session.');
}

export function requireAdmin(p: Principal): void {
  if (!isAdminRole(p.role)) throw forbidden('admin_only', undefined, 'Only an owner or admin may do this.');
}

/** Owner or Admin, from a session re-authenticated within the last ten minutes. */
export function requireRecentReauth(p: Principal, now: Date): void {
  requireSession(p);
  requireAdmin(p);
  if (!p.reauthAt || now.getTime() - p.reauthAt.getTime() > REAUTH_WINDOW_MS) {
    throw forbidden('reauth_required', undefined, 'Re-authenticate to do this.');
  }
}
