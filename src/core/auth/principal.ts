export const roles = ['owner', 'admin', 'member', 'agent', 'client_elevated', 'client'] as const;
export type Role = (typeof roles)[number];

/** `admin`: administrative operations by token (provisioning scripts); only an Owner or Admin mints it. */
export const scopes = ['read', 'write', 'triage', 'admin'] as const;
export type Scope = (typeof scopes)[number];

/** Where content created by this caller says it came from. */
export type Source = 'ui' | 'api' | 'mcp';

/** The way in an action came through, recorded with it in the audit log (a REST session and the console share `source: 'ui'`). */
export type Door = 'rest' | 'mcp' | 'console' | 'cli' | 'job';

/**
 * The verified caller inside one workspace. `identityId` is who acts: the token's
 * creator for a delegated token, the agent account for an agent token.
 */
export interface Principal {
  workspaceId: string;
  slug: string;
  identityId: string;
  name: string;
  role: Role;
  /** The client a client user belongs to; null for workspace users. */
  clientId: string | null;
  via: 'token' | 'session';
  scopes: ReadonlySet<Scope>;
  /** A token's project allow-list; null when unrestricted. */
  projectIds: readonly string[] | null;
  tokenId: string | null;
  tokenKind: 'delegated' | 'agent' | null;
  sessionId: string | null;
  /** Last re-authentication of a browser session. */
  reauthAt: Date | null;
  source: Source;
  door: Door;
  /** Membership flags that widen what a role may read (the console's `billingOperator`); absent: none. */
  flags?: ReadonlySet<MembershipFlag>;
}

/** A membership flag an admin sets on a workspace member (see Requirement.orFlag). */
export type MembershipFlag = 'billingOperator';

export const isClientRole = (role: Role) => role === 'client' || role === 'client_elevated';
export const isAdminRole = (role: Role) => role === 'owner' || role === 'admin';
