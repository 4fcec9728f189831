import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeCategory, makeClient, makeProject, makeUser, makeWorkspace, type Workspace } from './helpers/factories.ts';
import { cleanEnv, runToEnd } from './helpers/spawn.ts';
import { wtHere } from './helpers/wt.ts';

/**
 * wt rates list|set (issue 23): the same operations as GET and PUT /rates, as the CLI's principal
 * (audited with the door `cli`); `set` replaces the whole table from --rate options with names,
 * amounts in major units; refusals exit 2 with the operation's or the command line's message.
 */

const wt = path.resolve('bin/wt.js');
let app: TestApp;
let env: NodeJS.ProcessEnv;
let ws: Workspace;

beforeAll(async () => {
  app = await startTestApp();
  env = cleanEnv({ DATABASE_URL: app.db.url, LOG_LEVEL: 'silent' });
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  await makeUser(sql, ws, { role: 'owner' });
  await makeCategory(sql, ws, 'Senior developer, backend');
  await makeClient(sql, ws, { code: 'ACME' });
  await makeProject(sql, ws, { key: 'WEB' });
});
afterAll(() => app.close());

/** `wt` in this process (test/helpers/wt.ts); `real` starts `node bin/wt.js`, for the file's first command. */
const run = (...args: string[]) => wtHere(env, args);
const real = (...args: string[]) => runToEnd('node', [wt, ...args], env);

it('sets the whole table by names and lists it; audited with the door cli', { timeout: 120_000 }, async () => {
  const set = await real(
    'rates',
    'set',
    '--workspace',
    ws.slug,
    '--rate',
    'category=Senior developer, backend,currency=eur,hourly=95.5,from=2026-01-01',
    '--rate',
    'category=Senior developer, backend,currency=JPY,hourly=12000,from=2026-01-01,client=ACME',
    '--rate',
    'category=senior developer, backend,currency=EUR,hourly=120,from=2026-07-01,project=web',
  );
  expect(set.code, set.stderr).toBe(0);
  expect(set.stdout.trim()).toBe('3 rate(s) saved');
  const list = await run('rates', 'list', '--workspace', ws.slug);
  expect(list.code, list.stderr).toBe(0);
  expect(list.stdout.trim().split('\n')).toEqual([
    'Senior developer, backend\tdefault\tEUR\t95.50\t2026-01-01',
    'Senior developer, backend\tclient ACME\tJPY\t12000\t2026-01-01',
    'Senior developer, backend\tproject WEB\tEUR\t120.00\t2026-07-01',
  ]);
  const [audit] = await app.db.sql`select detail, door from ops_audit where workspace_id = ${ws.id} and action = 'rates.replace'`;
  expect(audit).toMatchObject({ detail: '3 rates', door: 'cli' });
});

it('refuses what the operation or the command line refuses, with exit code 2, changing nothing', { timeout: 120_000 }, async () => {
  const cases: [string[], RegExp][] = [
    [['--rate', 'category=Senior developer, backend,currency=EUR,hourly=95.555,from=2026-01-01'], /hourlyRateMinor/],
    [['--rate', 'category=Designer,currency=EUR,hourly=1,from=2026-01-01'], /Designer/],
    [['--rate', 'category=Senior developer, backend,currency=EUR,hourly=1'], /from= is required/],
    [[], /--rate options \(or --none/],
  ];
  for (const [args, message] of cases) {
    const res = await run('rates', 'set', '--workspace', ws.slug, ...args);
    expect(res.code, args.join(' ')).toBe(2);
    expect(res.stderr, args.join(' ')).toMatch(message);
  }
  expect((await app.db.sql`select 1 from rates where workspace_id = ${ws.id}`).length).toBe(3);
  const none = await run('rates', 'set', '--workspace', ws.slug, '--none');
  expect([none.code, none.stdout.trim()]).toEqual([0, '0 rate(s) saved']);
  expect((await run('rates', 'list', '--workspace', ws.slug)).stdout.trim()).toBe('no rates');
});
