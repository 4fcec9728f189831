import type { Router } from '@koa/router';
import type { AppDeps, AppState } from '../context.ts';
import { boardRoutes } from './board.ts';
import { changesRoutes } from './changes.ts';
import { commentsRoutes } from './comments.ts';
import { documentsRoutes } from './documents.ts';
import { ticketRelationsRoutes } from './ticket-relations.ts';
import { ticketsReadRoutes } from './tickets-read.ts';
import { ticketsWriteRoutes } from './tickets-write.ts';
import { timeRoutes } from './time.ts';
import { workspaceRoutes } from './workspace.ts';

/** Every router mounted under /api/w/:slug, one per area. */
export const workspaceRouters: ((deps: AppDeps) => Router<AppState>)[] = [
  workspaceRoutes,
  ticketsReadRoutes,
  ticketsWriteRoutes,
  ticketRelationsRoutes,
  commentsRoutes,
  timeRoutes,
  changesRoutes,
  boardRoutes,
  documentsRoutes,
];
