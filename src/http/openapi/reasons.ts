import { ACTIONS, type Action, type Requirement } from '../../core/access/actions.ts';

/** `details.reason` values by error status; a status with an empty list is documented without reasons. */
export type Reasons = Partial<Record<400 | 403 | 404 | 409 | 412, string[]>>;

/** The ticket filters' reasons (src/core/tickets/filters.ts): an id of no such row in the workspace. */
const FILTER_REASONS = ['unknown_state', 'unknown_kind', 'unknown_label', 'unknown_priority', 'unknown_person', 'unknown_project', 'unknown_client'];

/** A client's fields that can be refused for their value (src/core/clients/rules.ts). */
const CLIENT_FIELD_REASONS = ['unknown_locale', 'policy_format', 'unknown_bank', 'bank_client_mismatch', 'bad_currency'];

/** A project's fields that can be refused for their value (src/core/projects/rules.ts). */
const PROJECT_FIELD_REASONS = ['key_reserved', 'policy_format', 'unknown_bank', 'bank_client_mismatch', 'collaborator_is_billing_client'];

/** The refusals of deleting an item of a workflow list (src/core/workflow/vocabulary.ts), beside its own one-of flag and unknown id. */
const WORKFLOW_DELETE = { 400: ['same_target'], 404: ['unknown_target'], 409: ['in_use'] };

/** Filters a client user or a restricted token may not use: the Inbox, billing. */
const FILTER_FORBIDDEN = ['inbox_forbidden', 'billing_fields_forbidden'];

/**
 * The contract's documented reasons per route (../shared/spec/api.md, keyed by method and the
 * path under /api/w/{slug}), beside the ones every route can meet. The 403 reasons an action's
 * requirements imply are not listed here: `credentialReasons` derives them from the action table.
 */
export const ROUTE_REASONS: Record<string, Reasons> = {
  'GET /tickets': { 400: ['bad_cursor', ...FILTER_REASONS], 403: FILTER_FORBIDDEN },
  'POST /tickets': {
    400: [
      'unknown_kind',
      'unknown_priority',
      'unknown_state',
      'unknown_label',
      'unknown_person',
      'assignee_ineligible',
      'billing_client_scope',
      'estimate_format',
    ],
    403: ['billing_fields_forbidden', 'assign_forbidden', 'state_forbidden', 'field_forbidden', 'kind_forbidden'],
    404: ['unknown_project'],
    // documenting a 409 lists all of them: the parent chain's (a new ticket is never its own ancestor)
    409: ['project_archived', 'parent_cycle', 'parent_depth'],
  },
  'PATCH /tickets/{ref}': {
    400: [
      'billing_client_scope',
      'unknown_client',
      'policy_format',
      'estimate_format',
      'parent_estimate',
      'unknown_kind',
      'unknown_priority',
      'unknown_state',
      'unknown_label',
      'unknown_person',
      'assignee_ineligible',
      'unknown_bank',
      'bank_client_mismatch',
    ],
    403: ['field_forbidden', 'state_forbidden', 'assign_forbidden', 'billing_fields_forbidden', 'kind_forbidden'],
    409: ['restore_first'],
    412: ['etag_mismatch'],
  },
  'POST /tickets/{ref}/move': {
    400: ['billing_client_scope', 'unknown_kind', 'unknown_person', 'assignee_ineligible'],
    404: ['unknown_project'],
    409: ['reset_requires_admin', 'confirm_reset', 'moved_out_of_sight', 'restore_first', 'project_archived'],
  },
  'DELETE /tickets/{ref}': { 409: ['ticket_billed', 'period_closed'] },
  'POST /tickets/{ref}/viewers': { 403: ['share_forbidden'], 404: ['unknown_person'] },
  'PUT /tickets/{ref}/parent': { 400: ['self_parent'], 409: ['own_ancestor', 'parent_cycle', 'parent_depth'] },
  'POST /tickets/{ref}/links': { 400: ['self_link'], 409: ['dependency_cycle', 'dependency_depth'] },
  'POST /tickets/{ref}/codehost': { 400: ['repo_format', 'github_url', 'sha_format', 'pr_format', 'sha_or_pr_required'] },
  'GET /board': { 400: FILTER_REASONS, 403: FILTER_FORBIDDEN },
  'GET /board/{stateId}': { 400: ['bad_cursor', ...FILTER_REASONS], 403: FILTER_FORBIDDEN },
  'GET /time': { 400: ['range_limit', 'date_out_of_range'], 403: ['admin_only'] },
  'POST /tickets/{ref}/comments': { 403: ['share_forbidden'] },
  'PATCH /tickets/{ref}/comments/{id}': { 403: ['share_forbidden', 'not_author'] },
  'DELETE /tickets/{ref}/comments/{id}': { 403: ['not_author'] },
  'POST /periods': { 400: ['date_out_of_range'], 409: ['period_not_contiguous'] },
  'POST /periods/{id}/reopen': { 409: ['period_billed'] },
  'POST /time': { 400: ['ticket_unrouted', 'date_out_of_range'], 409: ['before_first_period_note', 'closed_period_log'] },
  'PATCH /time/{id}': {
    400: ['negative_minutes', 'correction_fixed', 'net_negative', 'billing_client_scope', 'date_out_of_range'],
    403: ['not_entry_author', 'session_required', 'admin_only'],
    404: ['unknown_category'],
    409: ['entry_billed', 'closed_period_edit', 'destination_period_closed', 'before_first_period', 'attribution_diverges'],
  },
  'DELETE /time/{id}': { 400: ['net_negative'], 403: ['not_entry_author'], 409: ['closed_period_delete', 'entry_billed', 'entry_corrected'] },
  'POST /time/{id}/corrections': { 400: ['correction_source', 'net_negative'], 409: ['today_period_closed'] },
  'GET /documents/{id}/download': {
    403: ['no_document_access', 'document_forbidden', 'combined_document_forbidden'],
    404: ['unknown_document', 'file_unavailable'],
    409: ['document_voided', 'document_redacted'],
  },
  'POST /billing/runs': { 404: ['unknown_period'], 409: ['period_open', 'run_in_progress', 'nothing_to_bill', 'missing_rate'] },
  'GET /billing/runs': { 400: ['bad_cursor'] },
  'GET /billing/runs/{id}': { 404: ['unknown_run'] },
  'GET /billing/runs/{id}/entries': { 400: ['bad_cursor'], 404: ['unknown_run'] },
  'POST /billing/runs/{id}/void': { 404: ['unknown_run'], 409: ['run_voided', 'run_allocating'] },
  'POST /billing/runs/{id}/approve': { 404: ['unknown_run'], 409: ['run_voided', 'run_not_awaiting_approval'] },
  'POST /billing/banks': { 404: ['unknown_client'], 409: ['bank_exists'] },
  'POST /billing/banks/{id}/deposits': { 404: ['unknown_bank'] },
  'GET /clients/{id}/banks': { 404: ['unknown_client'] },
  'POST /api/auth/reauth': { 403: ['wrong_password'] },
  // logout is public but reads the session cookie when one is sent: a write with it needs the CSRF header
  'POST /api/auth/logout': { 403: ['csrf'] },
  'POST /invitations': {
    400: ['bad_address', 'client_role_needs_client'],
    403: ['owner_only'],
    404: ['unknown_client'],
    409: ['already_member', 'invitation_pending'],
  },
  'POST /invitations/{id}/resend': { 404: ['unknown_invitation'], 409: ['invitation_closed'] },
  'DELETE /invitations/{id}': { 404: ['unknown_invitation'], 409: ['invitation_closed'] },
  'POST /members/{identityId}/deactivate': { 403: ['owner_only'], 404: ['unknown_person'], 409: ['self_deactivation'] },
  'POST /members/{identityId}/reactivate': { 403: ['owner_only'], 404: ['unknown_person'] },
  'PATCH /settings': { 400: ['unknown_timezone', 'bad_address', 'bad_iban', 'bad_bic', 'bad_logo', 'logo_too_large'] },
  'GET /api/auth/invitations/{token}': { 404: ['unknown_invitation'] },
  'POST /api/auth/invitations/{token}/accept': { 403: ['wrong_password'], 404: ['unknown_invitation'], 409: ['address_taken'] },
  'POST /api/auth/password-reset/{token}': { 404: ['unknown_reset'] },
  'POST /tokens': { 400: ['agent_required', 'expiry_past'], 403: ['admin_only'], 404: ['unknown_project', 'unknown_person'] },
  'DELETE /tokens/{id}': { 404: [] },
  'DELETE /tickets/{ref}/viewers/{identityId}': { 403: ['reporter_not_removable'], 404: ['unknown_viewer'] },
  'POST /tickets/{ref}/visibility': { 404: ['unknown_person'] },
  'GET /tickets/{ref}/comments': { 400: ['bad_cursor'] },
  'POST /tickets/{ref}/attachments': {
    400: ['file_required', 'audience_mismatch', 'too_many_files', 'bad_multipart'],
    403: ['not_author'],
    404: ['unknown_comment'],
  },
  'POST /categories': { 409: ['category_exists'] },
  'PATCH /members/{identityId}': {
    400: ['unknown_timezone', 'client_role_needs_client'],
    403: ['admin_only', 'owner_only'],
    404: ['unknown_person', 'unknown_category', 'unknown_client'],
    409: ['last_owner'],
  },
  'PUT /projects/{projectId}/members/{identityId}/category': { 404: ['unknown_person', 'unknown_category'] },
  'POST /documents/{id}/deliveries/{deliveryId}/resend': { 404: ['unknown_document', 'unknown_delivery'], 409: ['run_voided', 'delivery_not_resendable'] },
  'GET /mailbox': { 404: ['no_mailbox'] },
  'PUT /mailbox': { 400: ['move_to_required', 'move_to_same_folder', 'password_required', 'host_not_allowed'] },
  'DELETE /mailbox': { 404: ['no_mailbox'] },
  'POST /mailbox/poll': { 404: ['no_mailbox'], 409: ['mailbox_disabled'] },
  'GET /mailbox/messages': { 400: ['bad_cursor'] },
  // issue 22: clients, projects, memberships and categories (src/core/clients, src/core/projects, src/core/time/categories-admin.ts)
  'POST /clients': { 400: CLIENT_FIELD_REASONS, 409: ['client_code_taken'] },
  'GET /clients/{id}': { 404: ['unknown_client'] },
  'PATCH /clients/{id}': { 400: CLIENT_FIELD_REASONS, 404: ['unknown_client'], 409: ['client_code_taken'] },
  'POST /clients/{id}/archive': { 404: ['unknown_client'] },
  'GET /clients/{id}/recipients': { 404: ['unknown_client'] },
  'PUT /clients/{id}/recipients': { 400: ['recipient_address', 'recipient_duplicate', 'recipient_not_client_user'], 404: ['unknown_client'] },
  'POST /projects': { 400: PROJECT_FIELD_REASONS, 404: ['unknown_client'], 409: ['key_taken', 'client_archived'] },
  'GET /projects/{id}': { 404: ['unknown_project'] },
  'PATCH /projects/{id}': { 400: PROJECT_FIELD_REASONS, 404: ['unknown_project', 'unknown_client'], 409: ['key_taken', 'client_archived'] },
  'POST /projects/{id}/archive': { 404: ['unknown_project'] },
  'GET /projects/{id}/members': { 404: ['unknown_project'] },
  'PUT /projects/{id}/members/{identityId}': { 404: ['unknown_project', 'unknown_person', 'unknown_category'] },
  'DELETE /projects/{id}/members/{identityId}': { 404: ['unknown_project', 'unknown_person'] },
  'PATCH /categories/{id}': { 404: ['unknown_category'], 409: ['category_exists'] },
  'DELETE /categories/{id}': { 404: ['unknown_category'], 409: ['in_use'] },
  // issue 23: rates (src/core/rates)
  'PUT /rates': { 404: ['unknown_category', 'unknown_client', 'unknown_project'], 409: ['duplicate_rate'] },
  // issue 22: the workflow's lists (src/core/workflow: states.ts, kinds.ts, priorities.ts, labels.ts)
  'POST /workflow/states': { 409: ['key_taken', 'default_closed'] },
  'PUT /workflow/states/{id}': { 404: ['unknown_state'], 409: ['key_taken', 'default_closed', 'default_required', 'resolve_required', 'in_use'] },
  'DELETE /workflow/states/{id}': { ...WORKFLOW_DELETE, 404: ['unknown_state', 'unknown_target'], 409: ['default_required', 'resolve_required', 'in_use'] },
  'POST /workflow/kinds': { 409: ['key_taken'] },
  'PUT /workflow/kinds/{id}': { 404: ['unknown_kind'], 409: ['key_taken', 'inbound_required'] },
  'DELETE /workflow/kinds/{id}': { ...WORKFLOW_DELETE, 404: ['unknown_kind', 'unknown_target'], 409: ['inbound_required', 'in_use'] },
  'POST /workflow/priorities': { 409: ['key_taken'] },
  'PUT /workflow/priorities/{id}': { 404: ['unknown_priority'], 409: ['key_taken', 'default_required'] },
  'DELETE /workflow/priorities/{id}': { ...WORKFLOW_DELETE, 404: ['unknown_priority', 'unknown_target'], 409: ['default_required', 'in_use'] },
  'POST /workflow/labels': { 409: ['name_taken'] },
  'PUT /workflow/labels/{id}': { 404: ['unknown_label'], 409: ['name_taken'] },
  'DELETE /workflow/labels/{id}': { ...WORKFLOW_DELETE, 404: ['unknown_label', 'unknown_target'] },
};

/**
 * The `details` keys a reason carries beside `reason` and `field`, where a client acts on them:
 * documented on every error response that lists the reason.
 */
export const REASON_DETAILS: Record<string, Record<string, Record<string, unknown>>> = {
  nothing_to_bill: {
    periodId: { type: 'string', format: 'uuid', description: 'The period asked for.' },
    runId: { type: 'string', format: 'uuid', description: "The latest live run that billed the period's entries; absent when none did." },
    runCreatedAt: { type: 'string', format: 'date-time', description: 'When that run was started.' },
  },
};

/**
 * 403 `csrf` (src/core/auth/csrf.ts): a write sent with the session cookie but without its CSRF
 * token, on every write route that reads the cookie (all but the public ones; logout is listed above).
 */
export const writeReadsCookie = (method: string, access: string): boolean => method !== 'GET' && access !== 'public';

/**
 * Reasons any route with an input can answer 400 with (src/core/validation.ts, src/core/failures.ts,
 * the input rule of src/core/input.ts, and a bad Idempotency-Key on a token POST).
 */
export const INPUT_REASONS = [
  'validation',
  'bad_uuid',
  'bad_json',
  'bad_request',
  'ref_too_long',
  'bad_encoding',
  'invalid_characters',
  'too_deep',
  'bad_idempotency_key',
  'idempotency_unsupported',
];

/** The 403 reasons the action's requirements imply (src/core/auth/guards.ts, the ticket rule's own). */
export function credentialReasons(action: Action): string[] {
  const r: Requirement = ACTIONS[action];
  const out: string[] = [];
  if (r.session || r.reauth) out.push('session_required');
  // a token restricted to projects is refused outside them (and the Inbox) on any route it may call
  if (r.scope) out.push('missing_scope', 'project_not_allowed');
  if (r.staff) out.push('workspace_users_only');
  if (r.admin || r.reauth) out.push('admin_only');
  if (r.reauth) out.push('reauth_required');
  if (typeof r.ticket === 'object') {
    out.push(r.ticket.reason);
    if (r.ticket.clients) out.push(r.ticket.clients.reason);
  }
  return out;
}

/**
 * 404 reasons of the path itself: a workspace route names a slug that may not exist (or not be
 * the caller's: `unknown_workspace`), and a path parameter can take a value no route matches (an
 * empty or slashed segment: `unknown_route`, src/http/middleware/errors.ts).
 */
export function pathReasons(path: string, inWorkspace: boolean): string[] {
  const out: string[] = [];
  if (inWorkspace) out.push('unknown_workspace');
  if (path.includes('/:')) out.push('unknown_route');
  return out;
}

/** Whether a caller can be refused for a reason the action table does not name (placement rules, a token's allow-list). */
export const placesTicket = (action: Action): boolean => 'into' in ACTIONS[action];
