import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpClient } from './helpers/mcp.ts';
import { appRoutes } from './fuzz/routes.ts';
import { expected, fillPath, TABLE, type Probe } from './authz/table.ts';
import { authzWorld, seesHiddenProject, type AuthzWorld, type Cred, type Reply } from './authz/world.ts';

/**
 * Every route × every role × every credential kind, against the contract (test/authz/table.ts):
 * the status of each cell, the error envelope on refusals, and no response naming anything its
 * caller may not see (the world seeds every hidden object with a SECRET-<uuid> marker or records
 * its ids; test/authz/world.ts).
 */

let w: AuthzWorld;
beforeAll(async () => {
  w = await authzWorld();
}, 120_000);
afterAll(() => w?.app.close());

const routes = appRoutes();

it('classifies every route of the app, and lists no route the app lacks', () => {
  const inApp = routes.map((r) => r.key).sort();
  const inTable = Object.keys(TABLE).sort();
  expect(
    inApp.filter((k) => !inTable.includes(k)),
    'routes without a row in test/authz/table.ts: classify them',
  ).toEqual([]);
  expect(
    inTable.filter((k) => !inApp.includes(k)),
    'rows of test/authz/table.ts for routes the app does not have',
  ).toEqual([]);
});

function envelopeProblem(path: string, res: Reply): string | null {
  if (res.status < 400) return null;
  const e = res.json?.error;
  if (path === '/mcp' && e && typeof e.message === 'string') return null; // JSON-RPC errors
  if (!e || typeof e.code !== 'string' || typeof e.message !== 'string') return `not the error envelope: ${res.text.slice(0, 200)}`;
  return null;
}

async function cell(method: string, pattern: string, p: Probe, c: Cred): Promise<string[]> {
  const req = { ...p, ...(p.build ? await p.build(w, c) : {}) };
  const path = fillPath(pattern, { slug: w.ws.slug, ...req.params });
  const res = await w.send(p.anonymous ? null : c, method, path, { query: req.query, body: req.body, form: req.form, headers: req.headers });
  const exp = expected(p, c);
  const out: string[] = [];
  const reason = res.json?.error?.details?.reason;
  if (!exp.status.includes(res.status) || (exp.reason && reason !== exp.reason)) {
    out.push(`${c.name}: expected ${exp.status.join('|')}${exp.reason ? ` ${exp.reason}` : ''}, got ${res.status} ${res.text.slice(0, 160)}`);
  }
  const bad = envelopeProblem(pattern, res);
  if (bad) out.push(`${c.name}: ${bad}`);
  const leaks = w.leaks(c, res.text);
  if (leaks.length) out.push(`${c.name}: ${method} ${path} (${res.status}) shows ${leaks.join(', ')}`);
  return out;
}

describe.each(Object.entries(TABLE))('%s', (key, probes) => {
  const [method, pattern] = key.split(' ') as [string, string];
  it.each(probes.map((p) => [p.label, p] as const))('%s', async (_label, p) => {
    const failures: string[] = [];
    for (const c of w.creds) failures.push(...(await cell(method, pattern, p, c)));
    expect(failures).toEqual([]);
  });
});

/** Arguments for a tool's required inputs, by name; what a tool needs beyond these it does not get. */
function argsFor(tool: Tool, ticket: string): Record<string, unknown> {
  const schema = tool.inputSchema as { properties?: Record<string, { items?: { enum?: string[] } }>; required?: string[] };
  const byName: Record<string, unknown> = { ticket, ref: ticket, state: w.states.default, stateId: w.states.default, from: w.today, to: w.today };
  const args: Record<string, unknown> = {};
  for (const name of schema.required ?? []) if (name in byName) args[name] = byName[name];
  const include = schema.properties?.include?.items?.enum;
  if (include) args.include = include;
  return args;
}

describe('MCP read tools show nothing hidden', () => {
  it('every read-only tool, for every token, on a visible ticket linked to hidden ones and on hidden tickets', { timeout: 120_000 }, async () => {
    const failures: string[] = [];
    for (const c of w.creds.filter((x) => x.token)) {
      const client = await mcpClient(w.app, c.token!);
      try {
        const { tools } = await client.listTools();
        const calls: [string, Record<string, unknown>][] = [];
        for (const tool of tools.filter((t) => t.annotations?.readOnlyHint)) {
          for (const ticket of [w.tickets.visA.humanId, w.tickets.visB.humanId, w.tickets.hidden.humanId, w.tickets.moved.id, w.tickets.inbox.humanId]) {
            calls.push([tool.name, argsFor(tool, ticket)]);
            if (!('ticket' in argsFor(tool, ticket))) break;
          }
        }
        if (tools.some((t) => t.name === 'search_tickets')) calls.push(['search_tickets', { query: w.tickets.hidden.humanId }]);
        if (calls.length < 10) failures.push(`${c.name}: only ${calls.length} read tool calls: is the surface empty?`);
        for (const [name, args] of calls) {
          const res = await client.callTool({ name, arguments: args });
          const text = JSON.stringify(res);
          const leaks = w.leaks(c, text);
          if (leaks.length) failures.push(`${c.name}: ${name} ${JSON.stringify(args)} shows ${leaks.join(', ')}`);
          if (args.ticket === w.tickets.hidden.humanId && !seesHiddenProject(c) && !res.isError)
            failures.push(`${c.name}: ${name} on the hidden ticket succeeded`);
        }
      } finally {
        await client.close();
      }
    }
    expect(failures).toEqual([]);
  });
});
