/**
 * What the permission model reads about a ticket and a project: loaded by the tickets' own SQL
 * (tickets/load.ts, tickets/fields.ts), judged here in access/ (permissions.ts, authorize.ts).
 */

/** A ticket row plus what permissions need to know about the caller's relation to it. */
export interface TicketFacts {
  id: string;
  workspaceId: string;
  projectId: string | null;
  projectKey: string | null;
  number: number;
  title: string;
  stateId: string;
  stateCategory: 'open' | 'closed';
  kindId: string;
  priorityId: string;
  assigneeId: string | null;
  reporterId: string | null;
  billingClientId: string | null;
  projectBillingClientId: string | null;
  parentId: string | null;
  estimateMinutes: number | null;
  archived: boolean;
  redacted: boolean;
  updatedAt: Date;
  /** The caller's membership of the ticket's project. */
  memberAccess: 'full' | 'limited' | null;
  /** For client users: whether the ticket's project belongs to (or collaborates with) their client. */
  clientOnProject: boolean;
  hasChildren: boolean;
  stateIds: string[];
  defaultStateId: string;
  customerResolveStateId: string | null;
}

/** A project the caller may address, with their relation to it (tickets/fields.ts's loadProject). */
export interface ProjectFacts {
  id: string;
  key: string;
  billingClientId: string | null;
  /** The caller's project membership. */
  access: 'full' | 'limited' | null;
  /** For client users: the project's billing or collaborating client is theirs. */
  clientOnProject: boolean;
  /** Archived (projects.archived_at set): it takes no new tickets (placement.ts). */
  archived: boolean;
}
