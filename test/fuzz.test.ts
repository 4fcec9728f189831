import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, type SessionCookie } from './helpers/app.ts';
import { makeToken } from './helpers/factories.ts';
import { authzWorld, type AuthzWorld } from './authz/world.ts';
import { foreign, identifyingOf, secondWorkspace, seedArtefacts, type Identifying } from './authz/tenant.ts';
import { body, encode, headers, pathValue, query, type Body, type Headers, type Pools } from './fuzz/arbitraries.ts';
import { appRoutes, type Route } from './fuzz/routes.ts';
import { watchWrites, writeMark, writesSince } from './helpers/write-watch.ts';
import { internalsIn, sendRaw, type RawReply } from './fuzz/send.ts';

/**
 * A fast-check property over every route of the app (read from the router, test/fuzz/routes.ts):
 * path parameters, query strings, bodies and headers, valid and hostile, sent as several
 * principals. Whatever is sent: never a 5xx (nor no answer), a 4xx is the JSON error envelope,
 * no body shows a stack frame or SQL error text, and a refused request (4xx) leaves every table
 * as it was (test/helpers/db-state.ts lists what may change; test/helpers/write-watch.ts logs the writes). `npm test` runs FUZZ_RUNS (default 40)
 * cases per route with a fixed seed; `npm run fuzz` runs more; FUZZ_SEED reproduces a failure.
 */

const RUNS = Number(process.env.FUZZ_RUNS ?? 40);
const SEED = Number(process.env.FUZZ_SEED ?? 20_240_901);
const SHRINK = process.env.FUZZ_SHRINK === '1';
const TIMEOUT = Math.max(60_000, RUNS * 4_000);

let w: AuthzWorld;
let pools: Pools;
let principals: Principal[];

interface Principal {
  name: string;
  headers: Record<string, string>;
  /** The workspace the credential belongs to (tenancy): nothing of the other may show. */
  workspace: 1 | 2 | null;
}

/** What identifies each workspace (test/authz/tenant.ts). */
let identifying: Record<1 | 2, Identifying[]>;

beforeAll(async () => {
  w = await authzWorld({ withCreds: false });
  const sql = w.app.db.sql;
  const member: SessionCookie = await login(w.app, w.people.member.email, w.people.member.password);
  const clientToken = (await makeToken(sql, w.ws, w.people.client, { scopes: ['read', 'write'] })).token;
  // Workspace 2 (tenancy): its principals share the case budget with workspace 1's, and both slugs are drawn.
  const art = await seedArtefacts(sql, w.ws, w.people.owner, w.clients.b, '2001-03-01');
  const w2 = await secondWorkspace(w);
  identifying = { 1: [...identifyingOf(w), ...art.strings], 2: w2.strings };
  const w2Owner = w2.creds.find((c) => c.name.startsWith('ws2 owner delegated token'))!;
  const w2Member = w2.creds.find((c) => c.name === 'ws2 member session')!;
  principals = [
    { name: 'owner token (read+write+triage)', headers: { authorization: `Bearer ${w.ownerToken}` }, workspace: 1 },
    { name: 'member session', headers: { cookie: member.cookie, 'x-csrf-token': member.csrfToken }, workspace: 1 },
    { name: 'client token (read+write)', headers: { authorization: `Bearer ${clientToken}` }, workspace: 1 },
    { name: 'anonymous', headers: {}, workspace: null },
    { name: 'garbage bearer', headers: { authorization: 'Bearer wt_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }, workspace: null },
    { name: 'workspace 2 owner token (read+write+triage)', headers: { authorization: `Bearer ${w2Owner.token}` }, workspace: 2 },
    {
      name: 'workspace 2 member session',
      headers: { cookie: w2Member.session!.cookie, 'x-csrf-token': w2Member.session!.csrfToken },
      workspace: 2,
    },
  ];
  const t = w.tickets;
  pools = {
    slugs: [w.ws.slug, w2.ws.slug],
    refs: [t.visA.humanId, t.visB.humanId, t.hidden.humanId, t.inbox.humanId, t.moved.humanId],
    ids: [
      ...Object.values(t).map((x) => x.id),
      ...Object.values(w.comments),
      ...Object.values(w.attachments),
      ...Object.values(w.entries),
      w.codehost.hidden,
      w.documents.hiddenCombined,
      w.states.default,
      w.projects.a.id,
      w.projects.h.id,
      w.clients.a,
      w.clients.b,
      ...Object.values(w.people).map((p) => p.id),
      w2.ticket.id,
      w2.client.id,
      w2.project.id,
      w2.runId,
      w2.documentId,
      w2.people.member.id,
    ],
    today: w.today,
  };
  // "a refused request changes nothing", read from a write log instead of two checksums of every table per case
  await watchWrites(sql);
}, 120_000);
afterAll(() => w?.app.close());

const WRONG_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'TRACE', 'PROPFIND'];

interface Case {
  principal: number;
  method: string;
  path: string;
  query: string;
  body: Body;
  headers: Headers;
}

function describeCase(c: Case, route: Route): string {
  const b = c.body.kind === 'none' ? 'no body' : c.body.kind === 'raw' ? `raw body: ${c.body.label}` : `body ${JSON.stringify(c.body.value)?.slice(0, 300)}`;
  return `${principals[c.principal]!.name}: ${c.method} ${c.path}${c.query ? `?${c.query.slice(0, 300)}` : ''} (route ${route.key}); ${b}; headers ${JSON.stringify(c.headers)}`;
}

function caseFor(route: Route): fc.Arbitrary<Case> {
  const params = route.params.map((name) => pathValue(name, pools));
  return fc.record({
    principal: fc.nat({ max: principals.length - 1 }),
    method: fc.oneof({ weight: 9, arbitrary: fc.constant(route.method) }, { weight: 1, arbitrary: fc.constantFrom(...WRONG_METHODS) }),
    path: fc.tuple(...params).map((values) => {
      let i = 0;
      return route.path.replace(/:([A-Za-z]+)/g, () => values[i++]!);
    }),
    query: query(pools),
    body: body(pools),
    headers,
  });
}

/** Everything a single answer must satisfy; returns the problems found. */
function problems(res: RawReply, c: Case, route: Route): string[] {
  const out: string[] = [];
  if (res.status <= 0) return [`no HTTP answer: ${res.text}`];
  if (res.status >= 500) out.push(`status ${res.status}: ${res.text.slice(0, 300)}`);
  // Tenancy: nothing of a workspace the caller does not belong to, unless the request itself carried it.
  const own = principals[c.principal]!.workspace;
  const sent = `${c.path} ${c.query} ${c.body.kind === 'json' ? JSON.stringify(c.body.value) : c.body.kind === 'raw' ? c.body.text.slice(0, 2000) : ''}`;
  for (const other of [1, 2] as const) {
    if (other === own) continue;
    const leaks = foreign(identifying[other], res.text, decodeURIComponentSafe(sent));
    if (leaks.length) out.push(`shows workspace ${other}'s ${leaks.join(', ')}`);
  }
  const leaked = internalsIn(res.text);
  if (leaked.length) out.push(`body shows internals (${leaked.join(', ')}): ${res.text.slice(0, 300)}`);
  // Node's HTTP parser refuses an oversized head (431) or a malformed one (400) before the app
  // runs, so there is no request id and no envelope: a transport refusal, not the app's answer.
  const transport = (res.status === 431 || res.status === 400) && !res.headers['x-request-id'];
  if (res.status >= 400 && c.method !== 'HEAD' && !transport) {
    let json: any;
    try {
      json = JSON.parse(res.text);
    } catch {
      json = undefined;
    }
    const e = json?.error;
    const jsonRpc = route.path === '/mcp' && e && typeof e.message === 'string';
    if (!jsonRpc && (!e || typeof e.code !== 'string' || typeof e.message !== 'string'))
      out.push(`status ${res.status} without the error envelope: ${res.text.slice(0, 200)}`);
  }
  return out;
}

/**
 * Every door names its audit, refusals too (docs/decisions.md): a refused void or resend may add
 * ops_audit rows, each `refused` or `failed`, and change nothing else there. `added` is how many
 * ops_audit rows the request inserted (test/helpers/write-watch.ts); they are the newest by id.
 */
async function onlyRefusalsAudited(added: number): Promise<boolean> {
  const rows = await w.app.db.sql<{ outcome: string }[]>`select outcome from ops_audit order by id desc limit ${added}`;
  return rows.length === added && added > 0 && rows.every((r) => r.outcome === 'refused' || r.outcome === 'failed');
}

function decodeURIComponentSafe(s: string): string {
  try {
    return `${s} ${decodeURIComponent(s)}`;
  } catch {
    return s;
  }
}

async function run(c: Case, route: Route): Promise<string[]> {
  const p = principals[c.principal]!;
  const h: Record<string, string> = { ...c.headers.extra, ...p.headers };
  // Logging out would end the member session the other cases use.
  if (route.path === '/api/auth/logout') delete h.cookie;
  if (c.headers.contentType && c.body.kind !== 'none') h['content-type'] = c.headers.contentType;
  if (c.headers.contentEncoding) h['content-encoding'] = c.headers.contentEncoding;
  const bytes = encode(c.body, c.headers);
  const mark = await writeMark(w.app.db.sql);
  const res = await sendRaw(w.app.base, c.method, c.path + (c.query ? `?${c.query}` : ''), h, bytes);
  const out = problems(res, c, route);
  if (res.status >= 400 && res.status < 500) {
    let reason: unknown;
    try {
      reason = JSON.parse(res.text)?.error?.details?.reason;
    } catch {
      reason = undefined;
    }
    // The one refusal that reports a committed change (contract: the move happened).
    if (reason !== 'moved_out_of_sight') {
      const writes = await writesSince(w.app.db.sql, mark);
      let changed = [...writes.keys()].sort();
      const audit = writes.get('ops_audit');
      if (audit && audit.UPDATE === 0 && audit.DELETE === 0 && (await onlyRefusalsAudited(audit.INSERT))) changed = changed.filter((t) => t !== 'ops_audit');
      if (changed.length) out.push(`refused with ${res.status} (${res.text.slice(0, 160)}) but changed ${changed.join(', ')}`);
    }
  }
  return out;
}

describe('fuzz every route', () => {
  const routes = appRoutes();
  it('reads the route table from the app', () => {
    expect(routes.length).toBeGreaterThan(40);
    expect(routes.map((r) => r.key)).toContain('GET /api/w/:slug/tickets/:ref');
  });

  it.each(routes.map((r, i) => [r.key, r, i] as const))('%s', { timeout: TIMEOUT }, async (_key, route, i) => {
    await fc.assert(
      fc.asyncProperty(caseFor(route), async (c) => {
        const found = await run(c, route);
        if (found.length) throw new Error(`${describeCase(c, route)}\n  ${found.join('\n  ')}`);
      }),
      { seed: SEED + i, numRuns: RUNS, endOnFailure: !SHRINK },
    );
  });
});

describe('bodies over the limit', () => {
  const routes = appRoutes().filter((r) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(r.method));
  it('a 10 MB JSON body is 413 in the envelope on every route that takes a body, and changes nothing', { timeout: 120_000 }, async () => {
    const big = Buffer.from(JSON.stringify({ title: 'x'.repeat(10 * 1024 * 1024), body: 'y' }));
    const failures: string[] = [];
    for (const route of routes) {
      const path = route.path.replace(/:([A-Za-z]+)/g, (_m, name: string) =>
        name === 'slug' ? w.ws.slug : name === 'ref' ? w.tickets.visA.humanId : w.tickets.visA.id,
      );
      const mark = await writeMark(w.app.db.sql);
      const res = await sendRaw(w.app.base, route.method, path, { authorization: `Bearer ${w.ownerToken}`, 'content-type': 'application/json' }, big);
      const problemsFound = problems(res, { principal: 0, method: route.method, path, query: '', body: { kind: 'none' }, headers: { extra: {} } }, route);
      if (res.status !== 413) problemsFound.push(`expected 413, got ${res.status} ${res.text.slice(0, 160)}`);
      const changed = [...(await writesSince(w.app.db.sql, mark)).keys()].sort();
      if (changed.length) problemsFound.push(`changed ${changed.join(', ')}`);
      if (problemsFound.length) failures.push(`${route.method} ${path}: ${problemsFound.join('; ')}`);
    }
    expect(failures).toEqual([]);
  });
});
