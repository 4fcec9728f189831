import { forbidden } from '../errors.ts';
import type { Session } from './sessions.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A cookie-authenticated write must carry the session's CSRF token (a cross-site form cannot read it). */
export function assertCsrf(session: Session, method: string, csrfHeader: string): void {
  if (!SAFE_METHODS.has(method) && csrfHeader !== session.csrfToken) {
    throw forbidden('csrf', undefined, 'A cookie-authenticated write needs the X-CSRF-Token header.');
  }
}
