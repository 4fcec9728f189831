import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpClient } from './helpers/mcp.ts';
import { appRoutes } from './fuzz/routes.ts';
import { argsFor, envelopeProblem } from './authz/checks.ts';
import { expected, fillPath, TABLE, type Probe } from './authz/table.ts';
import { twoWorkspaces } from './authz/tenant.ts';
import { seesHiddenProject, type AuthzWorld, type Cred } from './authz/world.ts';

/**
 * Every route × every role × every credential kind, against the contract (test/authz/table.ts):
 * the status of each cell, the error envelope on refusals, and no response naming anything its
 * caller may not see (the world seeds every hidden object with a SECRET-<uuid> marker or records
 * its ids; test/authz/world.ts). A second workspace's principals: test/authz-tenancy.test.ts (one
 * file each, so that the two halves run at once).
 */

let w: AuthzWorld;
beforeAll(async () => {
  // the world test/authz-tenancy.test.ts builds too (workspace 1's artefacts, a second workspace beside it)
  ({ w } = await twoWorkspaces());
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
            calls.push([tool.name, argsFor(w, tool, ticket)]);
            if (!('ticket' in argsFor(w, tool, ticket))) break;
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
