import { z } from 'zod';
import type { Ctx } from '../core/ctx.ts';
import { dateSchema, MAX_DATE, MIN_DATE } from '../core/input.ts';
import { DUE_SOON_DAYS } from '../core/board/my.ts';
import { resolvePersonId } from '../core/resolve/people.ts';
import { resolveProjectRef } from '../core/resolve/project-names.ts';
import { resolveClientId } from '../core/resolve/projects.ts';
import { resolveLabelIds, resolveWorkflowIds } from '../core/resolve/workflow.ts';
import { MAX_FILTER_IDS, ticketFilterSchema } from '../core/tickets/filters.ts';
import { LIST_LIMIT_MAX, listTicketsSchema } from '../core/tickets/list.ts';
import type { Surface } from './tool.ts';

/**
 * Tool arguments shared by several tools. They accept what a person would type (names, keys,
 * emails, human ids); the tool resolves them (src/core/resolve) and hands the core operation the
 * same input its REST twin receives, so every rule and every error stays the core's.
 * Ids are loose strings here (the core validates them exactly); dates take the app's one date schema.
 */

export const ticketArg = (what = 'Ticket') => z.string().describe(`${what}: human id (WEB-12) or id.`);
export const personArg = (what: string) => z.string().describe(`${what}: email, id, name or "me".`);
/** The app's one date schema (src/core/input.ts): a bad date is refused here as it is over REST. */
export const dateArg = (what: string) => dateSchema.describe(`${what}, YYYY-MM-DD (${MIN_DATE} to ${MAX_DATE}).`);
export const namesArg = (what: string) => z.array(z.string()).max(MAX_FILTER_IDS).describe(what);
export const cursorArg = listTicketsSchema.shape.cursor.describe('nextCursor of the previous page.');
const nonEmpty = (l: string[] | undefined) => (l && l.length > 0 ? l : undefined);

/** MCP lists default to a short page (REST: 50) so a result stays small; the range and cursor are REST's. */
export const DEFAULT_PAGE = 20;
export const limitArg = (what = 'Page size', def = DEFAULT_PAGE, max = LIST_LIMIT_MAX) => z.int().positive().max(max).default(def).describe(what);

/**
 * A project argument: key (WEB), name or id, for every token. A token's allow-list does not
 * narrow the schema (an enum of ids refused the very keys results show); the core refuses a
 * project outside it, as over REST. With exactly one project allowed, it is the default.
 */
export function projectArg(surface: Surface, what: string) {
  const ids = surface.projectIds;
  const arg = z.string().describe(`${what}: key (WEB), name or id${ids && ids.length > 0 ? '; this token is limited to its projects (list_projects)' : ''}.`);
  return ids && ids.length === 1 ? arg.default(ids[0]!) : arg;
}

/** The ticket filters of search_tickets and the board tools (GET /tickets's, by name). */
export function filterArgs(surface: Surface) {
  return {
    query: ticketFilterSchema.shape.q.describe('Full-text search, or a human id.'),
    project: projectArg(surface, 'Project').optional(),
    ...(surface.inbox ? { queue: z.literal('inbox').optional().describe('Only unrouted Inbox tickets.') } : {}),
    states: namesArg('States (id, key or name)').optional(),
    stateCategory: z.enum(['open', 'closed']).optional().describe('State category.'),
    kinds: namesArg('Kinds').optional(),
    priorities: namesArg('Priorities').optional(),
    labels: namesArg('Labels').optional(),
    assignee: personArg('Assignee ("none": unassigned)').optional(),
    reporter: personArg('Reporter').optional(),
    viewer: personArg('Viewer').optional(),
    billingClient: z.string().optional().describe('Client id, code or name; "none": internal.'),
    billingPolicy: ticketFilterSchema.shape.billingPolicy.describe('paid, free or bank:<id>.'),
    due: z.enum(['overdue', 'week', 'none']).optional().describe(`week: due in ${DUE_SOON_DAYS} days.`),
  };
}

export type FilterArgs = {
  query?: string | undefined;
  project?: string | undefined;
  queue?: 'inbox' | undefined;
  states?: string[] | undefined;
  stateCategory?: 'open' | 'closed' | undefined;
  kinds?: string[] | undefined;
  priorities?: string[] | undefined;
  labels?: string[] | undefined;
  assignee?: string | undefined;
  reporter?: string | undefined;
  viewer?: string | undefined;
  billingClient?: string | undefined;
  billingPolicy?: string | undefined;
  due?: 'overdue' | 'week' | 'none' | undefined;
};

/** Core error fields of the ticket filters -> the filter argument names. */
export const FILTER_FIELDS: Record<string, string> = {
  q: 'query',
  projectId: 'project',
  stateIds: 'states',
  kindIds: 'kinds',
  priorityIds: 'priorities',
  labelIds: 'labels',
  assigneeId: 'assignee',
  reporterId: 'reporter',
  viewerId: 'viewer',
  billingClientId: 'billingClient',
};

const personFilter = (ctx: Ctx, v: string | undefined, field: string) =>
  v === undefined ? undefined : v.trim().toLowerCase() === 'none' ? 'none' : resolvePersonId(ctx, v, field, { history: true });

/**
 * The filters as GET /tickets's query string (comma-separated ids), names resolved. Values are
 * strings exactly as a REST client would send them, so the core's own query schema checks them.
 */
export async function filterQuery(ctx: Ctx, a: FilterArgs): Promise<Record<string, string | undefined>> {
  const list = (ids: string[] | undefined) => (ids ? ids.join(',') : undefined);
  const [states, kinds, priorities, labels, assignee, reporter, viewer, billingClient, project] = await Promise.all([
    nonEmpty(a.states) && resolveWorkflowIds(ctx, 'states', a.states!, 'states'),
    nonEmpty(a.kinds) && resolveWorkflowIds(ctx, 'kinds', a.kinds!, 'kinds'),
    nonEmpty(a.priorities) && resolveWorkflowIds(ctx, 'priorities', a.priorities!, 'priorities'),
    nonEmpty(a.labels) && resolveLabelIds(ctx, a.labels!, 'labels'),
    personFilter(ctx, a.assignee, 'assignee'),
    personFilter(ctx, a.reporter, 'reporter'),
    personFilter(ctx, a.viewer, 'viewer'),
    a.billingClient === undefined ? undefined : resolveClientId(ctx, a.billingClient, 'billingClient', { allowNone: true }),
    a.project === undefined ? undefined : resolveProjectRef(ctx, a.project, 'project'),
  ]);
  return {
    q: a.query,
    projectId: project,
    queue: a.queue,
    stateIds: list(states),
    kindIds: list(kinds),
    priorityIds: list(priorities),
    labelIds: list(labels),
    stateCategory: a.stateCategory,
    assigneeId: assignee,
    reporterId: reporter,
    viewerId: viewer,
    billingClientId: billingClient,
    billingPolicy: a.billingPolicy,
    due: a.due,
  };
}

/** `T` with the keys that may be undefined made optional (what `defined` leaves out when they are). */
export type Defined<T> = { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & {
  [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined>;
};

/** Drops undefined entries (a query string has no "undefined" values). */
export function defined<T extends Record<string, unknown>>(o: T): Defined<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Defined<T>;
}
