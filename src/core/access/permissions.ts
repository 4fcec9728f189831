import { isAdminRole, isClientRole, type Principal } from '../auth/principal.ts';
import type { ProjectFacts, TicketFacts } from './facts.ts';

export type Audience = 'internal' | 'client';

/** The contract's TicketPermissions: what the caller may do to one ticket. */
export interface TicketPermissions {
  edit: boolean;
  read: Audience[];
  comment: Audience[];
  defaultAudience: Audience;
  changeAssignee: boolean;
  moveState: string[];
  customerResolveStateId: string | null;
  setBilling: boolean;
  changeKind: boolean;
  addViewers: boolean;
  move: boolean;
  archive: boolean;
  logTime: boolean;
  seeInternalFigures: boolean;
}

/** Fields a client user may change on a ticket they may edit; everything else is `field_forbidden`. */
export const CLIENT_EDITABLE_FIELDS = new Set(['title', 'description', 'startDate', 'dueDate', 'stateId']);

/**
 * Computed once per ticket; drives both the `permissions` object of a TicketPage and every
 * check of a write, so what the API offers and what it accepts cannot drift apart.
 *
 * - Owner/Admin: everything.
 * - Full project members: edit, move, archive, billing, kind, assignee. Limited: read, comment, log time.
 * - Inbox tickets: workspace users triage them (edit, move out); only Owner/Admin archive them.
 * - Client users: read and write the `client` audience; the reporter (or an elevated user on the
 *   client's project) edits title, description and dates, and moves the ticket to the
 *   customer-resolve state or back to the default state.
 * - Tokens: without `write` nothing that changes data is offered.
 */
export function ticketPermissions(p: Principal, t: TicketFacts): TicketPermissions {
  const admin = isAdminRole(p.role);
  const client = isClientRole(p.role);
  const canWrite = p.scopes.has('write');
  const inbox = t.projectId === null;
  const full = t.memberAccess === 'full';
  const member = t.memberAccess !== null;

  const staffEdit = !client && (admin || full || inbox);
  const clientEdit = client && (t.reporterId === p.identityId || (p.role === 'client_elevated' && t.clientOnProject));
  const edit = canWrite && (staffEdit || clientEdit);

  return {
    edit,
    read: readableAudiences(p),
    comment: canWrite ? (client ? ['client'] : ['internal', 'client']) : [],
    defaultAudience: defaultAudience(p),
    changeAssignee: canWrite && staffEdit,
    moveState: !edit ? [] : client ? clientStates(t) : t.stateIds,
    customerResolveStateId: t.customerResolveStateId,
    setBilling: canWrite && !client && (admin || full),
    changeKind: canWrite && staffEdit,
    addViewers: canWrite && (!client || p.role === 'client_elevated'),
    move: canWrite && !client && (admin || full || inbox),
    archive: canWrite && (admin || (!client && full)),
    logTime: canWrite && !client && !inbox && (admin || member),
    seeInternalFigures: !client,
  };
}

/**
 * The states a client user may put a ticket in: the customer-resolve state and the default
 * (reopen-target) state. The one definition behind `permissions.moveState` and the check of a
 * client user's `stateId` when starting a ticket.
 */
export function clientStates(w: { customerResolveStateId: string | null; defaultStateId: string | null }): string[] {
  return [w.customerResolveStateId, w.defaultStateId].filter((s): s is string => Boolean(s));
}

/** Comment and attachment audiences the caller may read (the same on every ticket they can see). */
export function readableAudiences(p: Principal): Audience[] {
  return isClientRole(p.role) ? ['client'] : ['internal', 'client'];
}

/** The audience a comment or attachment gets when none is named: `client` for client users, else `internal`. */
export function defaultAudience(p: Principal): Audience {
  return isClientRole(p.role) ? 'client' : 'internal';
}

/** What an action names that its rules read (see SUBJECT_PERMISSIONS and `authorize`). */
export interface Subject {
  /** The audience of the comment or attachment being written. */
  audience?: Audience;
  /** The identity id of the viewer being removed. */
  viewer?: string;
  /** Where a ticket is being put (create, move): a project, or null for the Inbox (src/core/access/placement.ts). */
  into?: ProjectFacts | null;
}

type SubjectPermissionRule = (perms: TicketPermissions, p: Principal, t: Pick<TicketFacts, 'reporterId'>, s: Subject) => boolean;

/** The part of the subject a permission reads; its absence is a bug of the calling operation. */
function needs<T>(value: T | undefined, what: keyof Subject): T {
  if (value === undefined) throw new Error(`this permission needs the subject's ${what}`);
  return value;
}

/**
 * Ticket permissions that depend on what the action names, computed from the same permissions:
 * the action table's rules refer to them by name, and the page's `viewers[].canRemove` is
 * `removeViewer` itself, so what the page offers and what the API accepts cannot drift apart.
 */
export const SUBJECT_PERMISSIONS = {
  /** Write a comment or attachment at `audience`: one of `permissions.comment`. */
  writeAudience: (perms, _p, _t, s) => perms.comment.includes(needs(s.audience, 'audience')),
  /** Remove `viewer`: the reporter never; oneself, given a write credential; anyone else with `permissions.addViewers`. */
  removeViewer: (perms, p, t, s) => {
    const viewer = needs(s.viewer, 'viewer');
    if (viewer === t.reporterId) return false;
    if (viewer === p.identityId) return p.scopes.has('write');
    return perms.addViewers;
  },
} as const satisfies Record<string, SubjectPermissionRule>;

export type SubjectPermission = keyof typeof SUBJECT_PERMISSIONS;
