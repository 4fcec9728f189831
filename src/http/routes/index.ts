import type { RouteGroup } from '../route-table.ts';
import { banksRoutes } from './banks.ts';
import { billingRoutes } from './billing.ts';
import { boardRoutes } from './board.ts';
import { changesRoutes } from './changes.ts';
import { commentsRoutes } from './comments.ts';
import { deliveriesRoutes } from './deliveries.ts';
import { documentsRoutes } from './documents.ts';
import { healthRoutes } from './health.ts';
import { mailboxRoutes } from './mailbox.ts';
import { openApiRoutes } from './openapi.ts';
import { sessionRoutes } from './session.ts';
import { ticketRelationsRoutes } from './ticket-relations.ts';
import { ticketsReadRoutes } from './tickets-read.ts';
import { ticketsWriteRoutes } from './tickets-write.ts';
import { timeRoutes } from './time.ts';
import { workspaceRoutes } from './workspace.ts';
import { wellKnownRoutes } from './well-known.ts';

/** Routes outside a workspace, each group on its own router: health, the browser session, the OpenAPI document, the MCP auth metadata (RFC 9728). */
export const rootGroups: RouteGroup[] = [
  { routes: healthRoutes },
  { prefix: '/api/auth', routes: sessionRoutes },
  { routes: openApiRoutes },
  { routes: wellKnownRoutes },
];

export const WORKSPACE_PREFIX = '/api/w/:slug';

/** Every area mounted under /api/w/:slug, one router per area, in this order. */
export const workspaceGroups: RouteGroup[] = [
  workspaceRoutes,
  ticketsReadRoutes,
  ticketsWriteRoutes,
  ticketRelationsRoutes,
  commentsRoutes,
  timeRoutes,
  changesRoutes,
  boardRoutes,
  documentsRoutes,
  deliveriesRoutes,
  billingRoutes,
  banksRoutes,
  mailboxRoutes,
].map((routes) => ({ routes }));

/** One REST route with its full router path (`/api/w/:slug/tickets/:ref`). */
export interface TableRoute {
  key: string;
  method: string;
  path: string;
  route: RouteGroup['routes'][number];
}

/** The whole REST route table, flattened: what the router is built from, read by tests (and the OpenAPI document, issue 15). */
export const ROUTE_TABLE: TableRoute[] = [
  ...rootGroups.flatMap((g) => g.routes.map((route) => ({ route, path: `${g.prefix ?? ''}${route.path}` }))),
  ...workspaceGroups.flatMap((g) => g.routes.map((route) => ({ route, path: `${WORKSPACE_PREFIX}${route.path}` }))),
].map(({ route, path }) => ({ key: `${route.method} ${path}`, method: route.method, path, route }));
