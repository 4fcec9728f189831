import { forbidden, type AppError } from '../errors.ts';
import type { AccessRefusal } from './authorize.ts';

/** Why an MCP tool is missing from a connection: a machine-readable cause and a sentence for the caller. */
export interface ToolRefusal {
  cause: string;
  message: string;
  extra?: Record<string, unknown>;
}

/**
 * A tool whose action the token can never perform (`can`), told as a missing tool: the cause is
 * the core's reason, except `workspace_users_only`, which tools have always called `client_user`.
 */
export function toolRefusalOf(refusal: AccessRefusal): ToolRefusal {
  const { reason, details } = refusal;
  switch (reason) {
    case 'missing_scope':
      return {
        cause: 'missing_scope',
        extra: { scope: details.scope },
        message:
          details.scope === 'write'
            ? 'it changes data and this token is read-only (it lacks the write scope)'
            : `this token lacks the ${String(details.scope)} scope`,
      };
    case 'workspace_users_only':
      return { cause: 'client_user', message: 'it is for workspace users, and client users have no time tracking' };
    case 'session_required':
      return { cause: 'session_required', message: 'it needs a browser session, and MCP connections use tokens' };
    case 'admin_only':
      return { cause: 'admin_only', message: 'it is for owners and admins' };
    default:
      return { cause: reason, extra: details, message: refusal.message };
  }
}

/** A call of a tool that exists but not on this connection: 403 `tool_not_available`, saying why. */
export function toolNotAvailable(tool: string, refusal: ToolRefusal): AppError {
  return forbidden('tool_not_available', { tool, cause: refusal.cause, ...refusal.extra }, `Tool ${tool} is not available: ${refusal.message}.`);
}
