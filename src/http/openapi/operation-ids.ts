import type { Action } from '../../core/access/actions.ts';

/**
 * The MCP tool of each core action that has one (src/mcp/tools: each tool names its action), so
 * that an integrator moving between the REST API and the tools meets one name per operation. The
 * HTTP adapter may not import the MCP one (test/architecture.test.ts): test/openapi.test.ts
 * checks this table against the MCP registry.
 */
export const TOOL_OF_ACTION: Partial<Record<Action, string>> = {
  'workflow.read': 'get_workflow',
  'projects.list': 'list_projects',
  'clients.list': 'list_clients',
  'people.list': 'list_people',
  'tickets.list': 'search_tickets',
  'tickets.read': 'get_ticket',
  'tickets.create': 'create_ticket',
  'tickets.update': 'update_ticket',
  'tickets.move': 'move_ticket',
  'tickets.parent': 'set_parent',
  'links.add': 'link_tickets',
  'links.remove': 'unlink_tickets',
  'codehost.add': 'add_codehost_link',
  'codehost.remove': 'remove_codehost_link',
  'comments.create': 'add_comment',
  'comments.list': 'list_comments',
  'comments.edit': 'edit_comment',
  'comments.delete': 'delete_comment',
  'changes.list': 'list_changes',
  'board.read': 'get_board',
  'mywork.read': 'get_my_work',
  'time.log': 'log_time',
  'time.edit': 'update_time_entry',
  'time.list': 'get_time_entries',
  'categories.list': 'list_categories',
  'documents.list': 'list_documents',
  'documents.download': 'get_document',
  'rates.list': 'list_rates',
};

/**
 * Routes whose operationId is not their action's tool or action name: a second route of one
 * action (the board's column page has a tool of its own), and the routes without an action.
 */
export const OPERATION_ID_OF_ROUTE: Record<string, string> = {
  'GET /api/w/:slug/board/:stateId': 'get_board_column',
  'GET /api/w/:slug/clients/:id/banks': 'list_client_banks',
  'GET /api/w/:slug/billing/runs/:id/entries': 'list_billing_run_entries',
  'GET /healthz': 'health',
  'GET /readyz': 'ready',
  'POST /api/auth/login': 'login',
  'POST /api/auth/reauth': 'reauthenticate',
  'POST /api/auth/logout': 'logout',
  'GET /api/auth/session': 'get_session',
  'GET /api/auth/invitations/:token': 'get_invitation',
  'POST /api/auth/invitations/:token/accept': 'accept_invitation',
  'POST /api/auth/password-reset': 'request_password_reset',
  'POST /api/auth/password-reset/:token': 'reset_password',
  'GET /api/openapi.json': 'get_openapi',
  'GET /api/docs': 'get_api_reference',
  'GET /api/docs/:asset': 'get_api_reference_asset',
};

/** `tickets.archive` -> `tickets_archive`: the default for an action without a tool. */
export const operationIdOfAction = (action: string): string => action.replaceAll('.', '_');
