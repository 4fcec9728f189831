import type { RouteDef } from '../route-table.ts';
import { banksRoutes } from '../routes/banks.ts';
import { billingRoutes } from '../routes/billing.ts';
import { boardRoutes } from '../routes/board.ts';
import { changesRoutes } from '../routes/changes.ts';
import { commentsRoutes } from '../routes/comments.ts';
import { deliveriesRoutes } from '../routes/deliveries.ts';
import { documentsRoutes } from '../routes/documents.ts';
import { healthRoutes } from '../routes/health.ts';
import { mailboxRoutes } from '../routes/mailbox.ts';
import { openApiRoutes } from '../routes/openapi.ts';
import { sessionRoutes } from '../routes/session.ts';
import { ticketRelationsRoutes } from '../routes/ticket-relations.ts';
import { ticketsReadRoutes } from '../routes/tickets-read.ts';
import { ticketsWriteRoutes } from '../routes/tickets-write.ts';
import { timeRoutes } from '../routes/time.ts';
import { workspaceRoutes } from '../routes/workspace.ts';

/** One tag per area (routes file); the areas of one subject share a tag. */
const AREAS = (): [string, string, RouteDef[][]][] => [
  ['health', 'Liveness and readiness probes.', [healthRoutes]],
  ['reference', 'This OpenAPI document and the API reference page.', [openApiRoutes]],
  ['session', 'Browser sessions: login, re-authentication, logout.', [sessionRoutes]],
  ['workspace', 'The workflow and API tokens.', [workspaceRoutes]],
  ['tickets', 'Tickets: list, read, create, update, move, archive, delete.', [ticketsReadRoutes, ticketsWriteRoutes]],
  ['relations', 'Parents, links, code-host references and viewers.', [ticketRelationsRoutes]],
  ['comments', 'Comments and attachments.', [commentsRoutes]],
  ['time', 'Time entries, periods, categories and member settings.', [timeRoutes]],
  ['changes', 'The change feed for pollers.', [changesRoutes]],
  ['board', 'The board and My work.', [boardRoutes]],
  ['documents', 'Client timesheets, their grants and deliveries.', [documentsRoutes, deliveriesRoutes]],
  ['billing', 'Billing runs and time banks.', [billingRoutes, banksRoutes]],
  ['mailbox', 'Email intake.', [mailboxRoutes]],
];

/** Built on first use: the route files import this module's importers (the OpenAPI route among them). */
let tagOfRoute: Map<RouteDef, string> | null = null;

export const tags = () => [...AREAS().map(([name, description]) => ({ name, description })), { name: 'other', description: 'Routes of areas not yet tagged.' }];

export function tagOf(route: RouteDef): string {
  tagOfRoute ??= new Map(AREAS().flatMap(([tag, , groups]) => groups.flat().map((r) => [r, tag] as const)));
  return tagOfRoute.get(route) ?? 'other';
}
