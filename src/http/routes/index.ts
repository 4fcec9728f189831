import { buildOpenApi } from '../openapi/document.ts';
import { routeTable, type ApiTag, type RestApi, type RouteGroup, type TableRoute } from '../route-table.ts';
import { banksRoutes } from './banks.ts';
import { billingRoutes } from './billing.ts';
import { boardRoutes } from './board.ts';
import { categoriesRoutes } from './categories.ts';
import { changesRoutes } from './changes.ts';
import { clientsRoutes } from './clients.ts';
import { commentsRoutes } from './comments.ts';
import { deliveriesRoutes } from './deliveries.ts';
import { documentsRoutes } from './documents.ts';
import { healthRoutes } from './health.ts';
import { homeRoutes } from './home.ts';
import { mailboxRoutes } from './mailbox.ts';
import { invitationRoutes } from './invitations.ts';
import { openApiRoutes } from './openapi.ts';
import { peopleRoutes } from './people.ts';
import { projectsRoutes } from './projects.ts';
import { ratesRoutes } from './rates.ts';
import { sessionRoutes } from './session.ts';
import { ticketRelationsRoutes } from './ticket-relations.ts';
import { ticketsReadRoutes } from './tickets-read.ts';
import { ticketsWriteRoutes } from './tickets-write.ts';
import { timeRoutes } from './time.ts';
import { workspaceRoutes } from './workspace.ts';
import { wellKnownRoutes } from './well-known.ts';
import { workflowAdminRoutes } from './workflow-admin.ts';

/** The OpenAPI document's tags, in its order: one per subject; each route group below names its own. */
const TAGS = [
  { name: 'health', description: 'Liveness and readiness probes.' },
  { name: 'reference', description: 'The landing page, this OpenAPI document and the API reference page.' },
  { name: 'session', description: 'Browser sessions: login, re-authentication, logout.' },
  { name: 'people', description: 'People: invitations and their links, password resets, members, workspace settings.' },
  { name: 'workspace', description: 'The workflow and API tokens.' },
  { name: 'tickets', description: 'Tickets: list, read, create, update, move, archive, delete.' },
  { name: 'relations', description: 'Parents, links, code-host references and viewers.' },
  { name: 'comments', description: 'Comments and attachments.' },
  { name: 'time', description: 'Time entries, periods, categories and member settings.' },
  { name: 'changes', description: 'The change feed for pollers.' },
  { name: 'board', description: 'The board and My work.' },
  { name: 'documents', description: 'Client timesheets, their grants and deliveries.' },
  { name: 'billing', description: 'Billing runs and time banks.' },
  { name: 'mailbox', description: 'Email intake.' },
  { name: 'clients', description: 'Clients and their billing recipients.' },
  { name: 'projects', description: 'Projects, their keys and their members.' },
  { name: 'other', description: 'Routes of areas not yet tagged.' },
] as const satisfies readonly ApiTag[];

type Tag = (typeof TAGS)[number]['name'];
const group = (tag: Tag, routes: RouteGroup['routes'], prefix?: string): RouteGroup => ({ tag, routes, ...(prefix ? { prefix } : {}) });

/** Built on first request: the route table is fixed once the process runs. */
let document: string | null = null;
const openApiJson = (): string => (document ??= JSON.stringify(buildOpenApi(REST_API)));

/** Routes outside a workspace: health, the landing page, the browser session, the OpenAPI document, the MCP auth metadata (RFC 9728). */
const rootGroups: RouteGroup[] = [
  group('health', healthRoutes),
  group('session', sessionRoutes, '/api/auth'),
  group('people', invitationRoutes, '/api/auth'),
  group('reference', homeRoutes),
  group('reference', openApiRoutes(openApiJson)),
  group('other', wellKnownRoutes),
];

/** Every area under /api/w/:slug, in this order (the order the router tries them). */
const workspaceGroups: RouteGroup[] = [
  group('workspace', workspaceRoutes),
  group('workspace', workflowAdminRoutes),
  group('people', peopleRoutes),
  group('tickets', ticketsReadRoutes),
  group('tickets', ticketsWriteRoutes),
  group('relations', ticketRelationsRoutes),
  group('comments', commentsRoutes),
  group('time', timeRoutes),
  group('time', categoriesRoutes),
  group('changes', changesRoutes),
  group('board', boardRoutes),
  group('documents', documentsRoutes),
  group('documents', deliveriesRoutes),
  group('billing', billingRoutes),
  group('billing', banksRoutes),
  group('billing', ratesRoutes),
  group('mailbox', mailboxRoutes),
  group('clients', clientsRoutes),
  group('projects', projectsRoutes),
];

/** The whole REST route table, flattened: what the one REST router is built from (src/http/app.ts), read by the OpenAPI document and by tests. */
export const ROUTE_TABLE: TableRoute[] = routeTable(rootGroups, workspaceGroups);

/** The REST API the OpenAPI document describes. */
export const REST_API: RestApi = { routes: ROUTE_TABLE, tags: [...TAGS] };
