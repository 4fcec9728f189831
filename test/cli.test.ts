import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allocateRun } from '../src/core/billing/allocate.ts';
import { jobCtx } from './billing-world.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { cleanEnv, runToEnd } from './helpers/spawn.ts';
import { wtHere } from './helpers/wt.ts';

const wt = path.resolve('bin/wt.js');
let app: TestApp;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  app = await startTestApp();
  env = cleanEnv({ DATABASE_URL: app.db.url, LOG_LEVEL: 'silent' });
});
afterAll(() => app.close());

/**
 * `node bin/wt.js`: this file is where each kind of command (setup, operation, process) and the exit
 * codes are run as real processes; `here` runs a command in this process (test/helpers/wt.ts) where
 * a test only needs what a command prints after the first real one.
 */
const run = (...args: string[]) => runToEnd('node', [wt, ...args], env);
const here = (...args: string[]) => wtHere(env, args);

describe('wt demo --json', () => {
  it('ensures the demo workspace and prints people, tokens, projects and clients; idempotent', async () => {
    const first = await run('demo', '--json');
    expect(first.code, first.stderr).toBe(0);
    const demo = JSON.parse(first.stdout);
    const person = { id: expect.any(String), email: expect.stringContaining('@'), password: expect.any(String), token: expect.stringMatching(/^wt_/) };
    expect(demo).toMatchObject({
      slug: 'northwind',
      people: { owner: person, admin: person, member: person, clientElevated: person, client: person, agent: { ...person, password: null } },
      tokens: {
        readOnly: expect.stringMatching(/^wt_/),
        noTriage: expect.stringMatching(/^wt_/),
        projectRestricted: { token: expect.stringMatching(/^wt_/), projectId: expect.any(String) },
      },
    });
    expect(demo.projects).toHaveLength(3);
    expect(demo.projects.filter((p: any) => p.billingClientId === null)).toHaveLength(1);
    expect(demo.clients).toHaveLength(2);

    const [{ n }] = await app.db.sql<
      [{ n: number }]
    >`select count(*)::int as n from tickets t join workspaces w on w.id = t.workspace_id where w.slug = 'northwind'`;
    expect(n).toBeGreaterThanOrEqual(24);
    const roles = await app.db.sql`select pm.access, pm.is_manager from project_memberships pm`;
    expect(roles.some((r) => r.access === 'full' && r.is_manager)).toBe(true);
    expect(roles.some((r) => r.access === 'limited')).toBe(true);

    const second = JSON.parse((await here('demo', '--json')).stdout);
    expect(second.people.owner.id).toBe(demo.people.owner.id);
    expect(second.projects).toEqual(demo.projects);
    expect(second.people.owner.token).not.toBe(demo.people.owner.token);
    expect((await app.db.sql`select count(*)::int as n from workspaces where slug = 'northwind'`)[0]!.n).toBe(1);

    // Tokens do what their names say.
    const wf = (token: string) => app.call('GET', '/api/w/northwind/workflow', { token });
    expect((await wf(demo.people.agent.token)).status).toBe(200);
    expect((await wf(demo.tokens.readOnly)).status).toBe(200);
    const [agentToken] = await app.db.sql`select kind from api_tokens where acts_as = ${demo.people.agent.id} order by created_at desc limit 1`;
    expect(agentToken!.kind).toBe('agent');
    const [restricted] = await app.db
      .sql`select project_ids, scopes from api_tokens where name like 'demo project-restricted%' order by created_at desc limit 1`;
    expect(restricted!.project_ids).toEqual([demo.tokens.projectRestricted.projectId]);
    const [noTriage] = await app.db.sql`select scopes from api_tokens where name like 'demo no-triage%' order by created_at desc limit 1`;
    expect(noTriage!.scopes).toEqual(['read', 'write']);
  });
});

describe('wt user and token', () => {
  it('creates a workspace, a user who can log in, and a token that works', async () => {
    expect((await run('workspace', 'create', '--slug', 'cli-ws', '--name', 'CLI')).code).toBe(0);
    const user = await here(
      'user',
      'create',
      '--workspace',
      'cli-ws',
      '--email',
      'cli@example.test',
      '--name',
      'Cli User',
      '--role',
      'admin',
      '--password',
      'secret-pass',
    );
    expect(user.code, user.stderr).toBe(0);
    const token = await run('token', 'create', '--workspace', 'cli-ws', '--email', 'cli@example.test', '--name', 'ci', '--scopes', 'read');
    expect(token.code, token.stderr).toBe(0);
    const t = JSON.parse(token.stdout);
    expect(t).toMatchObject({ scopes: ['read'], kind: 'delegated' });
    expect((await app.call('GET', '/api/w/cli-ws/workflow', { token: t.token })).status).toBe(200);
    const login = await app.call('POST', '/api/auth/login', { body: { email: 'cli@example.test', password: 'secret-pass' } });
    expect(login.status).toBe(200);
  });

  it('a usage error exits 2 with one clear line', async () => {
    const r = await run('token', 'create', '--workspace', 'nope', '--email', 'x@y.z', '--name', 'n');
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('wt: no workspace "nope"');
    const bad = await runToEnd('node', [wt, 'migrate'], { ...env, PORT: 'abc' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('PORT');
  });
});

describe('wt billing run', () => {
  const lastMonth = () => {
    const d = new Date();
    d.setUTCDate(1);
    d.setUTCMonth(d.getUTCMonth() - 1);
    return d.toISOString().slice(0, 7);
  };

  it('the demo leaves last month closed with time to bill on both clients: a dry run shows it, a run starts', async () => {
    expect((await here('demo', '--json')).code).toBe(0);
    const dry = await here('billing', 'run', '--workspace', 'northwind', '--period', lastMonth(), '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    const preview = JSON.parse(dry.stdout);
    expect(preview.dryRun).toBe(true);
    expect(preview.clients.map((c: any) => c.clientName).sort()).toEqual(['Globex Corporation', 'Initech']);
    const globex = preview.clients.find((c: any) => c.clientName === 'Globex Corporation');
    expect(globex.freeMinutes).toBeGreaterThan(0);
    expect(globex.bankMinutes).toBeGreaterThan(0);
    expect(globex.banks[0].name).toBe('Support retainer');
    const initech = preview.clients.find((c: any) => c.clientName === 'Initech');
    expect(initech.entryCount).toBe(2); // the on_close ticket closed last month; the open one waits
    const started = await run('billing', 'run', '--workspace', 'northwind', '--period', lastMonth());
    expect(started.code, started.stderr).toBe(0);
    expect(JSON.parse(started.stdout)).toMatchObject({ status: 'allocating', dryRun: false });
    const again = await here('billing', 'run', '--workspace', 'northwind', '--period', lastMonth());
    expect([again.code, again.stderr.trim()]).toEqual([2, 'wt: Another billing run is still allocating; start this one when it has.']);
    // allocated, the period has nothing left: the refusal says which run billed it (issue 26)
    const runId = JSON.parse(started.stdout).id as string;
    await allocateRun(jobCtx(app.db.sql), { runId });
    const billed = await here('billing', 'run', '--workspace', 'northwind', '--period', lastMonth());
    expect(billed.code, billed.stderr).toBe(2);
    expect(billed.stderr).toContain('No billable, unbilled entry qualifies for this period: its entries were billed by run');
    expect(billed.stderr).toContain(runId);
    const month = await here('billing', 'run', '--workspace', 'northwind', '--period', 'May');
    expect([month.code, month.stderr.trim()]).toEqual([2, 'wt: --period: a period is named by the month it starts in, YYYY-MM.']);
  });
});
