import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../src/cli/commands.ts';
import { isOperation, isPublicOperation } from '../src/core/operation.ts';
import { ROUTE_TABLE } from '../src/http/routes/index.ts';
import { allTools } from '../src/mcp/registry.ts';
import { consoleRoutes } from '../src/ops/pages/index.ts';

/**
 * Issue 21, the door walk: every REST route, MCP tool, console action and CLI command names the
 * operation it runs (`isOperation`), so `runOp` authorizes, parses, runs and audits it the same
 * way whatever the door. What runs no operation is listed here, each with why; anything else
 * that names none fails, and so does a REST route with a legacy `handler` or a tool with a legacy
 * `run` (the doors' own code instead of the operation).
 */

/** REST routes that run no operation: no caller to authorize, or the authentication itself. */
const REST_EXEMPT: Record<string, string> = {
  // health probes: the process's state, asked by the platform, no caller
  'GET /healthz': 'liveness probe',
  'GET /readyz': 'readiness probe',
  // static documents, the same for everyone
  'GET /': 'the landing page',
  'GET /api/openapi.json': 'the OpenAPI document',
  'GET /api/docs': 'the API reference page',
  'GET /api/docs/:asset': 'the API reference page’s assets',
  // OAuth protected-resource metadata (RFC 9728): fixed metadata for MCP clients
  'GET /.well-known/oauth-protected-resource': 'protected-resource metadata',
  'GET /.well-known/oauth-protected-resource/mcp': 'protected-resource metadata of /mcp',
  // the session's own routes that take no input: ending the session and reading it act on the
  // cookie's session alone (login, re-authentication and the emailed links are public operations, below)
  'POST /api/auth/logout': 'ends the session',
  'GET /api/auth/session': 'the session itself (who is signed in, its CSRF token)',
};

/**
 * REST routes that run before there is a principal (login, re-authentication, the one-time links
 * of emails): their handler runs a public operation (`runPublicOp`: parsed, no authorize) and sets
 * the cookie, and the route names that operation in `publicOp`.
 */
const REST_PUBLIC = [
  'POST /api/auth/login',
  'POST /api/auth/reauth',
  'GET /api/auth/invitations/:token',
  'POST /api/auth/invitations/:token/accept',
  'POST /api/auth/password-reset',
  'POST /api/auth/password-reset/:token',
];

/** MCP tools that run no operation: none. */
const TOOL_EXEMPT: Record<string, string> = {};

/**
 * CLI commands that run no operation (src/cli/commands.ts marks them): `process` commands run a
 * process or shape the database; `setup` commands write as the machine's operator before anyone
 * can sign in, with no principal to authorize (like a seed).
 */
const CLI_EXEMPT: Record<string, 'process' | 'setup'> = {
  migrate: 'process', // applies migrations
  mcp: 'process', // MCP on stdio: each tool call is the tool's operation, walked above
  'embedded-env': 'process', // prints the embedded database's URL and key
  demo: 'setup', // seeds the demo workspace
  'workspace create': 'setup', // a workspace has no member to authorize before it exists
  'user create': 'setup', // its people (a role change of a member is changeRole, through runOp)
  'token create': 'setup', // tokens issued by the machine's operator
};

/** Entries of a list that fail a check, by name (so the failure lists them all at once). */
const failing = <T>(entries: T[], name: (e: T) => string, ok: (e: T) => boolean) => entries.filter((e) => !ok(e)).map(name);

describe('REST routes', () => {
  it('every route names an operation, unless exempt', () => {
    expect(
      failing(
        ROUTE_TABLE,
        (r) => r.key,
        (r) => isOperation(r.route.op) || isPublicOperation(r.route.publicOp) || r.key in REST_EXEMPT,
      ),
    ).toEqual([]);
  });
  it('the routes that run before there is a principal name a public operation', () => {
    const byKey = new Map(ROUTE_TABLE.map((r) => [r.key, r.route]));
    expect(REST_PUBLIC.filter((k) => !isPublicOperation(byKey.get(k)?.publicOp))).toEqual([]);
    // and only they: a workspace route never runs one
    expect(ROUTE_TABLE.filter((r) => r.route.publicOp !== undefined && !REST_PUBLIC.includes(r.key)).map((r) => r.key)).toEqual([]);
  });
  it('no route has a legacy handler, unless exempt', () => {
    expect(
      failing(
        ROUTE_TABLE,
        (r) => r.key,
        (r) => r.route.handler === undefined || r.key in REST_EXEMPT || isPublicOperation(r.route.publicOp),
      ),
    ).toEqual([]);
  });
  it('every exemption is a route of the table (none left over)', () => {
    const keys = new Set(ROUTE_TABLE.map((r) => r.key));
    expect(Object.keys(REST_EXEMPT).filter((k) => !keys.has(k))).toEqual([]);
  });
});

describe('MCP tools', () => {
  it('every tool names an operation, unless exempt', () => {
    expect(
      failing(
        allTools,
        (t) => t.name,
        (t) => isOperation(t.op) || t.name in TOOL_EXEMPT,
      ),
    ).toEqual([]);
  });
  it('no tool has a legacy run, unless exempt', () => {
    expect(
      failing(
        allTools,
        (t) => t.name,
        (t) => (t as { run?: unknown }).run === undefined || t.name in TOOL_EXEMPT,
      ),
    ).toEqual([]);
  });
});

describe('the console', () => {
  it('every form post is an action naming an operation, and every page is a GET', () => {
    const posts = consoleRoutes.filter((r) => r.method === 'POST');
    expect(posts.length).toBeGreaterThan(0);
    expect(
      failing(
        posts,
        (r) => `POST /ops${r.path}`,
        (r) => 'op' in r && isOperation(r.op),
      ),
    ).toEqual([]);
    expect(
      failing(
        consoleRoutes,
        (r) => `${r.method} /ops${r.path}`,
        (r) => ('op' in r ? r.method === 'POST' : r.method === 'GET'),
      ),
    ).toEqual([]);
  });

  /**
   * A page is code, not data, so its reads are checked through what it imports: every value a page
   * imports from the core is an operation (read through `runOp`), or one of the few helpers listed.
   */
  const PAGE_CORE_HELPERS: Record<string, string> = {
    runOp: 'the runner itself',
    toAppError: 'tells a missing mailbox (404) from a failure',
    listIntakeInput: 'the intake log’s status values, to read the filter field',
    decimalToMinor: 'a rate typed in major units, as the exact minor units the operation takes (pure, no read)',
    minorToDecimal: 'a rate’s minor units shown in major units in its field (pure, no read)',
  };
  it('every page reads the core through operations', async () => {
    const dir = path.resolve('src/ops/pages');
    const offenders: string[] = [];
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
      const text = readFileSync(path.join(dir, file), 'utf8');
      for (const m of text.matchAll(/import\s+(type\s+)?\{([^}]*)\}\s+from\s+'(\.\.\/\.\.\/core\/[^']+)'/g)) {
        if (m[1]) continue; // a type-only import
        const names = m[2]!
          .split(',')
          .map((n) => n.trim())
          .filter((n) => n && !n.startsWith('type '));
        const mod = (await import(path.resolve(dir, m[3]!))) as Record<string, unknown>;
        for (const n of names) if (!isOperation(mod[n]) && !(n in PAGE_CORE_HELPERS)) offenders.push(`${file}: ${n}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});

describe('CLI commands', () => {
  it('every command that performs a service operation names it; the others are marked process or setup, and listed', () => {
    const entries = Object.entries(COMMANDS);
    expect(
      failing(
        entries,
        ([name]) => name,
        ([, c]) => c.kind !== 'operation' || isOperation(c.op),
      ),
    ).toEqual([]);
    const plain = Object.fromEntries(entries.filter(([, c]) => c.kind !== 'operation').map(([name, c]) => [name, c.kind]));
    expect(plain).toEqual(CLI_EXEMPT);
  });
});
