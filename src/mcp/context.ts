import type { RouterContext } from '@koa/router';

/** What the MCP route keeps on a request (the composed app's state holds at least this). */
export interface McpState {
  requestId: string;
}

/** A request to the MCP route, as its handler (http.ts) and the rate limit (limits.ts) see it. */
export type McpContext = RouterContext<McpState>;
