import type { Scope } from '../auth/principal.ts';
import type { TicketPermissions } from '../tickets/permissions.ts';

/**
 * What one core operation requires of its caller, as data (Outline's `allow()` rules, plus what
 * a token adds: scopes and the kind of credential). `authorize` checks them in the contract's
 * order: credential (scope or session) -> workspace users only -> the ticket is visible (404,
 * loaded by the operation) -> re-authentication or role -> the ticket's permissions.
 */
export interface Requirement {
  /** A token needs this scope (a browser session holds every scope). */
  scope?: Scope;
  /** Browser session only: a token is 403 `session_required`. */
  session?: true;
  /** Workspace users only: a client user is 403 `workspace_users_only` (time tracking). */
  staff?: true;
  /** Owner or Admin: 403 `admin_only`. */
  admin?: true;
  /** Owner or Admin re-authenticated within ten minutes: 403 `reauth_required` (implies session and admin). */
  reauth?: true;
  /**
   * The action acts on one ticket: role and permission checks wait until the operation has
   * loaded it (a hidden ticket is 404 before any role check). With a TicketRule, that entry of
   * the ticket's permissions (the TicketPage's `permissions`) must be true.
   */
  ticket?: true | TicketRule;
}

/** A ticket permission an action needs, and the 403 reason when the caller lacks it. */
export interface TicketRule {
  allows: BooleanPermission;
  reason: string;
  message: string;
}

export type BooleanPermission = { [K in keyof TicketPermissions]: TicketPermissions[K] extends boolean ? K : never }[keyof TicketPermissions];

const read = { scope: 'read' } as const;
const write = { scope: 'write' } as const;
const session = { session: true } as const;
const onTicket = { ticket: true } as const;
const editTicket = { ticket: { allows: 'edit', reason: 'edit_forbidden', message: 'You may not edit this ticket.' } } as const;

/** Every core operation that has a caller, by action name. */
export const ACTIONS = {
  'workflow.read': read,
  'tickets.list': read,
  'tickets.read': read,
  'tickets.create': write,
  'tickets.update': { ...write, ...editTicket },
  'tickets.move': { ...write, ...onTicket },
  'tickets.archive': {
    ...session,
    ticket: { allows: 'archive', reason: 'archive_forbidden', message: 'Only an owner, admin or full project member may archive this ticket.' },
  },
  'tickets.delete': { ...session, ...onTicket, reauth: true },
  'tickets.redact': { ...session, ...onTicket, reauth: true },
  'tickets.parent': { ...write, ...editTicket },
  'links.add': { ...write, ...editTicket },
  'links.remove': { ...write, ...editTicket },
  'codehost.add': { ...write, ...editTicket },
  'codehost.remove': { ...write, ...editTicket },
  'codehost.list': session,
  'viewers.add': { ...session, ticket: { allows: 'addViewers', reason: 'add_viewers_forbidden', message: 'You may not add viewers to this ticket.' } },
  'viewers.remove': { ...session, ...onTicket },
  'viewers.preview': { ...session, ...onTicket },
  'comments.list': read,
  'comments.create': write,
  'comments.edit': write,
  'comments.delete': write,
  'attachments.upload': write,
  'attachments.download': read,
  'board.read': read,
  'mywork.read': read,
  'changes.list': read,
  'documents.list': read,
  'documents.download': read,
  'documents.grants.list': { ...session, admin: true },
  'documents.grants.set': { ...session, admin: true },
  'documents.resend': { ...session, admin: true },
  'billing.runs.create': { ...session, admin: true },
  'billing.runs.list': { ...session, admin: true },
  'billing.runs.read': { ...session, admin: true },
  'billing.runs.void': { ...session, admin: true },
  'banks.list': { ...session, admin: true },
  'banks.create': { ...session, admin: true },
  'banks.deposit': { ...session, admin: true },
  'banks.balances': read,
  'context.pack': read,
  'time.list': { ...read, staff: true },
  'time.log': { ...write, staff: true, ticket: { allows: 'logTime', reason: 'log_time_forbidden', message: 'You may not log time on this ticket.' } },
  'time.edit': { ...write, staff: true },
  'time.delete': { ...session, staff: true },
  'time.correct': { ...session, staff: true, admin: true },
  'time.reattribute': { ...session, staff: true, ...onTicket, admin: true },
  'periods.list': { ...session, staff: true, admin: true },
  'periods.open': { ...session, staff: true, admin: true },
  'periods.close': { ...session, staff: true, admin: true },
  'periods.reopen': { ...session, staff: true, admin: true },
  'categories.list': { ...read, staff: true },
  'categories.create': { ...session, staff: true, admin: true },
  'categories.assign': { ...session, staff: true, admin: true },
  'members.update': { ...session, staff: true },
  'tokens.list': session,
  'tokens.create': session,
  'tokens.revoke': session,
} as const satisfies Record<string, Requirement>;

export type Action = keyof typeof ACTIONS;

export const actions = Object.keys(ACTIONS) as Action[];
