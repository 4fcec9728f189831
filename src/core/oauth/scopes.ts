import { isClientRole, type Role, type Scope } from '../auth/principal.ts';

/**
 * The scopes an OAuth client may ask for and a person may delegate to it: read, write, triage.
 * Never `admin` (administration needs a browser session or a token an owner mints by hand).
 */
export const OAUTH_SCOPES = ['read', 'write', 'triage'] as const satisfies readonly Scope[];
export type OAuthScope = (typeof OAUTH_SCOPES)[number];

/**
 * The scopes a person may delegate: never more than their role allows. `triage` is the Inbox,
 * which client users never see; every role reads and writes within what it may see.
 */
export function roleScopes(role: Role): OAuthScope[] {
  return isClientRole(role) ? ['read', 'write'] : [...OAUTH_SCOPES];
}

/** The OAuth scopes named in a space-separated `scope` value, in their order; anything else is ignored. */
export function knownScopes(scope: string | undefined): OAuthScope[] {
  const asked = new Set((scope ?? '').split(' '));
  return OAUTH_SCOPES.filter((s) => asked.has(s));
}
