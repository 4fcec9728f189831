import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { expect } from 'vitest';
import type { TestApp } from './app.ts';

/** The SDK's own client over real Streamable HTTP through the Koa stack. */
export async function mcpClient(app: TestApp, token: string, query = '', headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${app.base}/mcp${query}`), {
    requestInit: { headers: { authorization: `Bearer ${token}`, ...headers } },
  });
  await client.connect(transport);
  return client;
}

const validator = new AjvJsonSchemaValidator();

/**
 * A connected client that has listed its tools (so the SDK validates every structuredContent
 * against the output schema itself) and checks each result again explicitly.
 */
export interface McpSession {
  client: Client;
  tools: Tool[];
  /** Calls a tool; a success must validate against the tool's output schema, an error must carry {code, reason, details}. */
  call: (name: string, args?: Record<string, unknown>) => Promise<CallToolResult & { structuredContent: any }>;
  /** Calls a tool that must succeed; returns its structuredContent. */
  ok: (name: string, args?: Record<string, unknown>) => Promise<any>;
  /** Calls a tool that must fail; returns {code, reason, message, details}. */
  fail: (name: string, args?: Record<string, unknown>) => Promise<{ code: string; reason: string | null; message: string; details: any }>;
  close: () => Promise<void>;
}

export async function mcpSession(app: TestApp, token: string, query = ''): Promise<McpSession> {
  const client = await mcpClient(app, token, query);
  const { tools } = await client.listTools();
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult & { structuredContent: any };
    const tool = tools.find((t) => t.name === name);
    expect(tool, `tool ${name} is listed`).toBeDefined();
    expect(result.structuredContent, `${name} returns structuredContent: ${JSON.stringify(result.content)}`).toBeDefined();
    if (result.isError) expect(Object.keys(result.structuredContent).sort()).toEqual(['code', 'details', 'message', 'reason']);
    // errors too: the output schema admits the error object (the SDK client validates both)
    const check = validator.getValidator(tool!.outputSchema as never)(result.structuredContent);
    expect(check.valid, `${name} output matches its schema: ${check.errorMessage ?? ''}`).toBe(true);
    return result;
  };
  return {
    client,
    tools,
    call,
    ok: async (name, args) => {
      const r = await call(name, args);
      expect(r.isError, `${name} failed: ${JSON.stringify(r.structuredContent)}`).toBeFalsy();
      return r.structuredContent;
    },
    fail: async (name, args) => {
      const r = await call(name, args);
      expect(r.isError, `${name} should fail: ${JSON.stringify(r.structuredContent)}`).toBe(true);
      return r.structuredContent;
    },
    close: () => client.close(),
  };
}
