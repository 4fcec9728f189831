import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  isJSONRPCRequest,
  JSONRPCMessageSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  ReadResourceRequestSchema,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';

/**
 * JSON-RPC framing shared by both transports: what answers a message that is not a request, and
 * requests whose params the SDK would reject with an internal error and a raw zod dump.
 */

/** A JSON-RPC error object; `id` is null when the request's id could not be read (JSON-RPC 2.0, section 5). */
export interface RpcError {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: number; message: string; data?: unknown };
}

export function rpcError(id: unknown, code: number, message: string, data?: unknown): RpcError {
  const usable = typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
  return { jsonrpc: '2.0', id: usable ? id : null, error: { code, message, ...(data === undefined ? {} : { data }) } };
}

/**
 * A protocol error a handler throws: the SDK answers it with this code and message. McpError
 * would prefix the message with "MCP error <code>: " on the wire.
 */
export class ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
    /** Sent as the JSON-RPC error's `data` (the SDK copies it). */
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export const parseError = () => rpcError(null, ErrorCode.ParseError, 'Parse error: the message is not valid JSON.');

/** The id of a message that may not be valid, when it has a usable one. */
const idOf = (v: unknown): unknown => (v && typeof v === 'object' && !Array.isArray(v) ? (v as { id?: unknown }).id : null);

/**
 * Checks an already parsed JSON value as a JSON-RPC message or batch: null when it is one,
 * else the -32600 (invalid request) error to answer. The SDK answers -32700 (parse error) for
 * valid JSON that is not a message, and 202 with no body for an empty batch.
 */
export function invalidMessage(value: unknown): RpcError | null {
  if (Array.isArray(value)) {
    if (value.length === 0) return rpcError(null, ErrorCode.InvalidRequest, 'Invalid request: an empty batch.');
    for (const item of value) {
      const bad = invalidMessage(item);
      if (bad || Array.isArray(item)) return bad ?? rpcError(null, ErrorCode.InvalidRequest, 'Invalid request: a batch inside a batch.');
    }
    return null;
  }
  if (JSONRPCMessageSchema.safeParse(value).success) return null;
  return rpcError(idOf(value), ErrorCode.InvalidRequest, 'Invalid request: expected a JSON-RPC 2.0 request, notification or response object.');
}

/** Params schemas of the requests this server handles (others are the SDK's -32601). */
const paramsChecked: Record<string, { safeParse: (v: unknown) => { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } } }> = {
  initialize: InitializeRequestSchema,
  ping: PingRequestSchema,
  'tools/list': ListToolsRequestSchema,
  'tools/call': CallToolRequestSchema,
  'resources/list': ListResourcesRequestSchema,
  'resources/templates/list': ListResourceTemplatesRequestSchema,
  'resources/read': ReadResourceRequestSchema,
};

/** The -32602 (invalid params) error for a request whose params do not fit its method, with a one-line message. */
export function invalidParams(msg: JSONRPCMessage): RpcError | null {
  if (!isJSONRPCRequest(msg)) return null;
  const schema = paramsChecked[msg.method];
  if (!schema) return null;
  const r = schema.safeParse(msg);
  if (r.success) return null;
  const issue = r.error!.issues[0]!;
  const where = issue.path.map(String).join('.') || 'params';
  const hint =
    msg.method === 'tools/call'
      ? ' Send params {"name": "<tool>", "arguments": {...}}.'
      : msg.method === 'resources/read'
        ? ' Send params {"uri": "worktracker://..."}.'
        : '';
  return rpcError(msg.id, ErrorCode.InvalidParams, `Invalid params for ${msg.method}: ${where}: ${issue.message}.${hint}`);
}

/**
 * Answers requests with unusable params itself, before the SDK's protocol layer parses them (it
 * would throw a ZodError, answered as -32603 with the whole dump). Call after `server.connect`.
 */
export function guardRequests(transport: Transport): void {
  const deliver = transport.onmessage;
  transport.onmessage = (msg, extra) => {
    const bad = invalidParams(msg);
    if (bad) void transport.send(bad as JSONRPCMessage);
    else deliver?.(msg, extra);
  };
}
