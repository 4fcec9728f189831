import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpClient } from './helpers/mcp.ts';
import { argsFor, envelopeProblem } from './authz/checks.ts';
import { credentialGate, expected, fillPath, TABLE, type Probe, type Request } from './authz/table.ts';
import { foreign, twoWorkspaces, workspaceState, type Identifying, type SecondWorkspace } from './authz/tenant.ts';
import type { AuthzWorld, Cred, Reply } from './authz/world.ts';

let w: AuthzWorld;
/** Workspace 2 (test/authz/tenant.ts), and what identifies workspace 1 (its markers, ids, emails and artefacts). */
let w2: SecondWorkspace;
let ws1: Identifying[];
beforeAll(async () => {
  ({ w, w2, ws1 } = await twoWorkspaces());
}, 120_000);
afterAll(() => w?.app.close());

/**
 * Tenancy (issue 19): every workspace route of the table, built against workspace 1, sent by each
 * principal of workspace 2 (owner, admin, member and client by session; owner, member, client and
 * agent by token), once on workspace 1's slug and once with workspace 1's ids on workspace 2's own
 * slug. No answer may name workspace 1, none may be a 5xx, and workspace 1's rows stay as they were
 * after every write (each table with a workspace_id, checksummed around each write probe).
 */
describe('a second workspace', () => {
  const slugRoutes = Object.entries(TABLE).filter(([key]) => key.includes('/:slug'));
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
  const requestText = (path: string, req: Request) => `${path} ${req.query ?? ''} ${JSON.stringify(req.body ?? null)}`;

  /**
   * Builds the probe's request once (a build may write to workspace 1) and sends it as every
   * principal of workspace 2; with `checksum`, between two checksums of workspace 1's rows.
   */
  async function cells(
    method: string,
    pattern: string,
    p: Probe,
    slug: string,
    checksum: boolean,
    judge: (c: Cred, req: Request, path: string, res: Reply) => string[] | Promise<string[]>,
  ) {
    const req = { ...p, ...(p.build ? await p.build(w, w2.creds[0]!) : {}) };
    const path = fillPath(pattern, { slug, ...req.params });
    const before = checksum ? await workspaceState(w.app.db.sql, w.ws.id) : null;
    const out: string[] = [];
    for (const c of w2.creds) {
      const res = await w.send(c, method, path, { query: req.query, body: req.body, form: req.form, headers: req.headers });
      const problems = [...(await judge(c, req, path, res))];
      if (res.status >= 500) problems.push(`status ${res.status}`);
      const bad = envelopeProblem(pattern, res);
      if (bad) problems.push(bad);
      const leaks = foreign(ws1, res.text, requestText(path, req));
      if (leaks.length) problems.push(`shows workspace 1's ${leaks.join(', ')}`);
      if (problems.length) out.push(`${c.name}: ${method} ${path} (${res.status} ${res.text.slice(0, 160)}): ${problems.join('; ')}`);
    }
    if (before) {
      const after = await workspaceState(w.app.db.sql, w.ws.id);
      const changed = [...before.keys()].filter((k) => before.get(k) !== after.get(k));
      if (changed.length) out.push(`${p.label}: workspace 2's requests changed workspace 1's ${changed.join(', ')}`);
    }
    return out;
  }

  it('seeds a second workspace whose principals see their own data', async () => {
    const owner = w2.creds.find((c) => c.name === 'ws2 owner session')!;
    const runs = await w.send(owner, 'GET', `/api/w/${w2.ws.slug}/billing/runs`);
    expect(runs.status).toBe(200);
    expect(runs.text).toContain(w2.runId);
    const log = await w.send(owner, 'GET', `/api/w/${w2.ws.slug}/mailbox/messages`);
    expect(log.status).toBe(200);
    expect(log.text).toContain(w2.strings.find((s) => s.what === 'intake subject')!.text);
    const ticket = await w.send(owner, 'GET', `/api/w/${w2.ws.slug}/tickets/${w2.ticket.humanId}`);
    expect(ticket.json?.id).toBe(w2.ticket.id);
    // the same human id names workspace 1's ticket there: each workspace resolves its own
    expect(w2.ticket.humanId).toBe(w.tickets.visA.humanId);
    // and workspace 1's artefacts are there to be found by its own owner, so their absence above means something
    const own = w.creds.find((c) => c.name === 'owner session')!;
    const run = ws1.find((s) => s.what === 'billing run id')!.text;
    expect((await w.send(own, 'GET', `/api/w/${w.ws.slug}/billing/runs/${run}`)).status).toBe(200);
    const intake = await w.send(own, 'GET', `/api/w/${w.ws.slug}/mailbox/messages`);
    expect(intake.text).toContain(ws1.find((s) => s.what === 'intake subject')!.text);
  });

  describe.each(Object.entries(TABLE).filter(([key]) => !key.includes('/:slug')))("workspace 2's principals outside a workspace: %s", (key, probes) => {
    const [method, pattern] = key.split(' ') as [string, string];
    it.each(probes.map((p) => [p.label, p] as const))('%s', async (_label, p) => {
      const failures: string[] = [];
      for (const c of w2.creds) {
        const req = { ...p, ...(p.build ? await p.build(w, c) : {}) };
        const path = fillPath(pattern, { ...req.params });
        const res = await w.send(p.anonymous ? null : c, method, path, { query: req.query, body: req.body, form: req.form, headers: req.headers });
        const exp = expected(p, c);
        if (!exp.status.includes(res.status)) failures.push(`${c.name}: expected ${exp.status.join('|')}, got ${res.status}`);
        const leaks = foreign(ws1, res.text, requestText(path, req));
        if (leaks.length) failures.push(`${c.name}: ${method} ${path} shows workspace 1's ${leaks.join(', ')}`);
      }
      expect(failures).toEqual([]);
    });
  });

  describe.each(slugRoutes)("workspace 2's principals on workspace 1's slug: %s", (key, probes) => {
    const [method, pattern] = key.split(' ') as [string, string];
    it.each(probes.map((p) => [p.label, p] as const))('%s', async (_label, p) => {
      const failures = await cells(method, pattern, p, w.ws.slug, false, (_c, _req, _path, res) =>
        // a token or session is for its own workspace: another slug is unknown_workspace whatever the route
        res.status === 404 && res.json?.error?.details?.reason === 'unknown_workspace' ? [] : ['expected 404 unknown_workspace'],
      );
      expect(failures).toEqual([]);
    });
  });

  describe.each(slugRoutes)("workspace 1's ids through workspace 2's slug: %s", (key, probes) => {
    const [method, pattern] = key.split(' ') as [string, string];
    it.each(probes.map((p) => [p.label, p] as const))('%s', async (_label, p) => {
      const failures = await cells(method, pattern, p, w2.ws.slug, method !== 'GET', async (c, req, path, res) => {
        const gate = credentialGate(p, c);
        if (gate)
          return gate.status.includes(res.status) && (!gate.reason || res.json?.error?.details?.reason === gate.reason)
            ? []
            : [`expected ${gate.status.join('|')} ${gate.reason ?? ''}`];
        // An object of workspace 1 named in the path does not exist here: refused (404, or 403
        // where the route refuses the caller's role first) exactly as an id that never existed is.
        const named = ws1.filter((s) => UUID.test(s.text) && path.includes(s.text));
        if (named.length) {
          if (res.status !== 404 && res.status !== 403) return ['expected 404 (or 403 by role)'];
          const nowhere = named.reduce((x, s) => x.replaceAll(s.text, randomUUID()), path);
          const control = await w.send(c, method, nowhere, { query: req.query, body: req.body, form: req.form, headers: req.headers });
          const shape = (r: Reply) => `${r.status} ${r.json?.error?.code} ${r.json?.error?.details?.reason ?? ''}`;
          return shape(control) === shape(res) ? [] : [`answers ${shape(res)}, but ${shape(control)} for an id that never existed`];
        }
        if (method !== 'GET' && ws1.some((s) => JSON.stringify(req.body ?? null).includes(s.text)) && res.status < 400)
          return ['a write naming workspace 1 succeeded'];
        return [];
      });
      expect(failures).toEqual([]);
    });
  });

  it("MCP: workspace 2's tokens list no resource of workspace 1 and read none of its tickets or documents", { timeout: 120_000 }, async () => {
    const failures: string[] = [];
    for (const c of w2.creds.filter((x) => x.token)) {
      const client = await mcpClient(w.app, c.token!);
      try {
        const list = await client.listResources();
        const leaks = foreign(ws1, JSON.stringify(list));
        if (leaks.length) failures.push(`${c.name}: resources/list shows ${leaks.join(', ')}`);
        const uris = [
          `worktracker://documents/${w.documents.hiddenCombined}`,
          `worktracker://tickets/${w.tickets.visA.id}`,
          `worktracker://tickets/${w.tickets.hidden.id}`,
          ...ws1.filter((s) => s.what === 'document id').map((s) => `worktracker://documents/${s.text}`),
        ];
        for (const uri of uris) {
          const text = await client.readResource({ uri }).then(
            (r) => `READ ${JSON.stringify(r)}`,
            (e: unknown) => `ERROR ${String(e)}`,
          );
          if (text.startsWith('READ')) failures.push(`${c.name}: resources/read ${uri} succeeded`);
          const l = foreign(ws1, text, uri);
          if (l.length) failures.push(`${c.name}: resources/read ${uri} shows ${l.join(', ')}`);
        }
        const { tools } = await client.listTools();
        const calls: [string, Record<string, unknown>][] = [];
        for (const tool of tools.filter((t) => t.annotations?.readOnlyHint)) {
          for (const ticket of [w.tickets.visA.id, w.tickets.hidden.id, w.tickets.inbox.id]) {
            calls.push([tool.name, argsFor(w, tool, ticket)]);
            if (!('ticket' in argsFor(w, tool, ticket))) break;
          }
        }
        if (tools.some((t) => t.name === 'search_tickets')) {
          for (const s of ws1.filter((x) => /title|body|note|description/.test(x.what))) calls.push(['search_tickets', { query: s.text }]);
        }
        for (const [name, args] of calls) {
          const res = await client.callTool({ name, arguments: args });
          const l = foreign(ws1, JSON.stringify(res), JSON.stringify(args));
          if (l.length) failures.push(`${c.name}: ${name} ${JSON.stringify(args)} shows ${l.join(', ')}`);
          if (typeof args.ticket === 'string' && !res.isError) failures.push(`${c.name}: ${name} on workspace 1's ticket ${args.ticket} succeeded`);
        }
      } finally {
        await client.close();
      }
    }
    expect(failures).toEqual([]);
  });
});
