import type { MembershipFlag, Scope } from '../auth/principal.ts';
import type { Subject, SubjectPermission, TicketPermissions } from './permissions.ts';
import type { TicketFacts } from './facts.ts';

/**
 * What one core operation requires of its caller, as data (Outline's `allow()` rules, plus what
 * a token adds: scopes and the kind of credential). `authorize` checks them in the contract's
 * order: credential (scope or session) -> workspace users only -> the ticket is visible (404,
 * loaded by the operation) -> re-authentication or role -> the ticket's permissions -> where the
 * ticket is put.
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
  /** With `admin`: a workspace user (never a client user) whose membership has this flag passes the role check too (a read-only billing operator). */
  orFlag?: MembershipFlag;
  /** Owner or Admin re-authenticated within ten minutes: 403 `reauth_required` (implies session and admin). */
  reauth?: true;
  /**
   * The action acts on one ticket: role and permission checks wait until the operation has
   * loaded it (a hidden ticket is 404 before any role check). With a TicketRule, that entry of
   * the ticket's permissions (the TicketPage's `permissions`) must be true, or, for a rule over
   * what the action names (an audience, a viewer), that subject permission must hold.
   */
  ticket?: true | TicketRule;
  /**
   * The action puts a ticket into a project or the Inbox (create, move): the placement rules
   * (src/core/access/placement.ts) are checked once the operation has loaded the target it names.
   */
  into?: true;
}

/** A ticket permission an action needs, and the 403 when the caller lacks it. */
export interface TicketRule {
  /** An entry of the ticket's permissions, or a permission over what the action names (SUBJECT_PERMISSIONS). */
  allows: BooleanPermission | SubjectPermission;
  reason: string;
  message: string | ((s: Subject) => string);
  /** The 403's details beside the reason. */
  details?: (t: TicketFacts, s: Subject) => Record<string, unknown>;
  /** Client users, who never hold this permission, are refused for this reason instead. */
  clients?: { reason: string; message: string };
}

export type BooleanPermission = { [K in keyof TicketPermissions]: TicketPermissions[K] extends boolean ? K : never }[keyof TicketPermissions];

const read = { scope: 'read' } as const;
const write = { scope: 'write' } as const;
const session = { session: true } as const;
/**
 * Administration (issue 22): Owner or Admin, from a browser session (which holds every scope) or a
 * token with the `admin` scope (provisioning scripts; only an Owner or Admin mints one).
 */
const administer = { scope: 'admin', admin: true } as const;
const onTicket = { ticket: true } as const;
const editTicket = { ticket: { allows: 'edit', reason: 'edit_forbidden', message: 'You may not edit this ticket.' } } as const;
/** Writing a comment or an attachment: its audience must be one of `permissions.comment`. */
const writeAudience = {
  ticket: {
    allows: 'writeAudience',
    reason: 'audience_forbidden',
    message: (s) => `You may not write ${s.audience} comments on this ticket.`,
    details: (_t, s) => ({ field: 'audience', audience: s.audience }),
  },
} as const satisfies Requirement;

/** Every core operation that has a caller, by action name. */
export const ACTIONS = {
  'workflow.read': read,
  // issue 22: the workflow's lists (src/core/workflow/states.ts, kinds.ts, priorities.ts, labels.ts)
  'workflow.states.create': administer,
  'workflow.states.update': administer,
  'workflow.states.delete': administer,
  'workflow.kinds.create': administer,
  'workflow.kinds.update': administer,
  'workflow.kinds.delete': administer,
  'workflow.priorities.create': administer,
  'workflow.priorities.update': administer,
  'workflow.priorities.delete': administer,
  'workflow.labels.create': administer,
  'workflow.labels.update': administer,
  'workflow.labels.delete': administer,
  'projects.list': read,
  'projects.read': { ...read, staff: true },
  'projects.create': administer,
  'projects.update': administer,
  'projects.archive': administer,
  'projects.members.list': { ...read, staff: true },
  'projects.members.set': administer,
  'projects.members.remove': administer,
  'clients.list': { ...read, staff: true },
  'clients.read': administer,
  'clients.create': administer,
  'clients.update': administer,
  'clients.archive': administer,
  'clients.recipients.list': administer,
  'clients.recipients.set': administer,
  'rates.list': administer,
  'rates.replace': administer,
  'people.list': read,
  'tickets.list': read,
  'tickets.read': read,
  'tickets.create': { ...write, into: true },
  'tickets.update': { ...write, ...editTicket },
  'tickets.move': {
    ...write,
    ticket: {
      allows: 'move',
      reason: 'project_membership',
      message: 'Only full members of both projects (or an owner or admin) may move this ticket.',
      details: (t) => ({ projectId: t.projectId }),
      clients: { reason: 'move_forbidden', message: 'You may not move this ticket.' },
    },
    into: true,
  },
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
  'viewers.remove': {
    ...session,
    ticket: {
      allows: 'removeViewer',
      reason: 'remove_viewer_forbidden',
      message: 'You may not remove this viewer.',
      details: (_t, s) => ({ identityId: s.viewer }),
    },
  },
  'viewers.preview': { ...session, ...writeAudience },
  'comments.list': read,
  'comments.create': { ...write, ...writeAudience },
  'comments.edit': { ...write, ...writeAudience },
  'comments.delete': write,
  'attachments.upload': { ...write, ...writeAudience },
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
  'billing.runs.list': { ...session, admin: true, orFlag: 'billingOperator' },
  'billing.runs.read': { ...session, admin: true, orFlag: 'billingOperator' },
  'billing.runs.void': { ...session, admin: true },
  'billing.runs.approve': { ...session, admin: true },
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
  'categories.create': { ...administer, staff: true },
  'categories.assign': { ...administer, staff: true },
  'categories.update': { ...administer, staff: true },
  'categories.delete': { ...administer, staff: true },
  // one's own time settings by session; anyone's, and role and client, by Owner/Admin (also with an admin-scoped token)
  'members.update': { scope: 'admin', staff: true },
  'members.role': administer,
  'members.deactivate': administer,
  'members.reactivate': administer,
  'invitations.list': administer,
  'invitations.create': administer,
  'invitations.resend': administer,
  'invitations.revoke': administer,
  'settings.read': administer,
  'settings.update': administer,
  'mailbox.read': { ...session, admin: true, orFlag: 'billingOperator' },
  'mailbox.write': { ...session, admin: true },
  'mailbox.poll': { ...session, admin: true },
  'mailbox.messages': { ...session, admin: true, orFlag: 'billingOperator' },
  'ops.read': { ...session, admin: true, orFlag: 'billingOperator' },
  'ops.act': { ...session, admin: true },
  'ops.destroy': { ...session, reauth: true },
  'ops.operators.set': { ...session, admin: true },
  'tokens.list': session,
  'tokens.create': session,
  'tokens.revoke': session,
} as const satisfies Record<string, Requirement>;

export type Action = keyof typeof ACTIONS;

export const actions = Object.keys(ACTIONS) as Action[];
