import { latency } from '../lib.ts';
import type { Scenario } from '../scenario.ts';

/**
 * Issue 6: tools/call search_tickets over Streamable HTTP against GET /tickets for the same
 * query (the same page of 20, the MCP default) in the same run. Target: p50 within 1.5x.
 */
export const mcp: Scenario = {
  name: 'mcp',
  needsBig: true,
  async run(env) {
    const big = env.big!;
    const auth = { authorization: `Bearer ${big.restrictedToken}` };
    const call = (args: Record<string, unknown>) =>
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_tickets', arguments: args } });
    const mcpHeaders = { ...auth, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
    const rest = await latency('GET /tickets?limit=20', `${env.api}/api/w/${big.slug}/tickets?limit=20`, { headers: auth, connections: 4 });
    const tool = await latency('tools/call search_tickets (limit 20)', `${env.api}/mcp`, {
      headers: mcpHeaders,
      method: 'POST',
      body: call({}),
      connections: 4,
    });
    const restQ = await latency('GET /tickets?q=checkout&limit=20', `${env.api}/api/w/${big.slug}/tickets?q=checkout&limit=20`, {
      headers: auth,
      connections: 4,
    });
    const toolQ = await latency('tools/call search_tickets q=checkout', `${env.api}/mcp`, {
      headers: mcpHeaders,
      method: 'POST',
      body: call({ q: 'checkout' }),
      connections: 4,
    });
    const r = (a: { p50: number }, b: { p50: number }) => (a.p50 / b.p50).toFixed(2);
    return {
      rows: [rest, tool, restQ, toolQ],
      notes: [
        `search_tickets / GET /tickets p50: ${r(tool, rest)}x without q, ${r(toolQ, restQ)}x with q (target <= 1.5x) ${Number(r(tool, rest)) <= 1.5 && Number(r(toolQ, restQ)) <= 1.5 ? 'OK' : 'MISSED'}`,
        `tools/call answers: ${JSON.stringify(tool.statuses)} (every call must be 200)`,
      ],
    };
  },
};
