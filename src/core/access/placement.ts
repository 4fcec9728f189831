import { missingScope } from '../auth/guards.ts';
import { isAdminRole, isClientRole, type Principal } from '../auth/principal.ts';
import { conflict, forbidden } from '../errors.ts';
import type { ProjectFacts } from './facts.ts';

/**
 * Where a ticket may be put (the `into` requirement of `tickets.create` and `tickets.move`),
 * checked by `authorize` once the operation has loaded the project (`loadProject`: a project a
 * client user's client takes no part in is already 404 `unknown_project`):
 * - the Inbox (null): workspace users; a token needs `triage` and no project allow-list;
 * - a project: inside a token's allow-list; workspace users as full members (Owner/Admin: any),
 *   except when routing a ticket out of the Inbox (`triage`), which needs no membership;
 *   and never an archived project (409 `project_archived`: restore it first), unless the ticket is
 *   already in it (`from`: a move within its project), since its own tickets stay editable.
 */
export function assertPlacement(p: Principal, into: ProjectFacts | null, opts: { triage: boolean; from?: string | null }): void {
  if (into === null) return assertInbox(p);
  assertInAllowList(p, into.id);
  if (!(isClientRole(p.role) || opts.triage || isAdminRole(p.role) || into.access === 'full')) {
    throw forbidden('project_membership', { projectId: into.id }, 'Only full members of the project may do this.');
  }
  if (into.archived && into.id !== opts.from) {
    throw conflict('project_archived', { projectId: into.id }, 'The project is archived: it takes no new tickets until it is restored.');
  }
}

/** Why the caller may not use the Inbox: the one Inbox rule, behind placing a ticket there and seeing it. */
function inboxBar(p: Principal): 'client' | 'allow_list' | 'triage' | null {
  if (isClientRole(p.role)) return 'client';
  if (p.projectIds) return 'allow_list';
  if (!p.scopes.has('triage')) return 'triage';
  return null;
}

/** Whether the caller may use the Inbox: see it (`canSeeInbox`, visible.ts) and put tickets there. */
export function canUseInbox(p: Principal): boolean {
  return inboxBar(p) === null;
}

function assertInbox(p: Principal): void {
  switch (inboxBar(p)) {
    case 'client':
      throw forbidden('inbox_forbidden', undefined, 'Client users start tickets in a project of their client.');
    case 'allow_list':
      throw forbidden('project_not_allowed', undefined, 'A token restricted to projects cannot use the Inbox.');
    case 'triage':
      throw missingScope('triage');
    case null:
      return;
  }
}

/** A token restricted to named projects acts only inside them. */
export function assertInAllowList(p: Principal, projectId: string): void {
  if (p.projectIds && !p.projectIds.includes(projectId)) {
    throw forbidden('project_not_allowed', { projectId }, 'This token is restricted to other projects.');
  }
}
