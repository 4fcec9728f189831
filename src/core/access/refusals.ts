import { forbidden, type AppError } from '../errors.ts';

/** Why an MCP tool is missing from a connection: a machine-readable cause and a sentence for the caller. */
export interface ToolRefusal {
  cause: string;
  message: string;
  extra?: Record<string, unknown>;
}

/** A call of a tool that exists but not on this connection: 403 `tool_not_available`, saying why. */
export function toolNotAvailable(tool: string, refusal: ToolRefusal): AppError {
  return forbidden('tool_not_available', { tool, cause: refusal.cause, ...refusal.extra }, `Tool ${tool} is not available: ${refusal.message}.`);
}
