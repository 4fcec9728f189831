import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { testDb, type TestDb } from './helpers/db.ts';
import { makeToken, makeUser, makeWorkspace } from './helpers/factories.ts';
import { cleanEnv, runToEnd, spawnGroup, waitUntil, type Spawned } from './helpers/spawn.ts';
import { freePort } from './setup/global.ts';

/**
 * The compiled runtime (issue 15): `npm run build` compiles to dist/, and the Procfile's commands —
 * exactly as written there — migrate, serve and work from it against a real database.
 */
let db: TestDb;
const procs: Spawned[] = [];
const procfile = Object.fromEntries(
  readFileSync('Procfile', 'utf8')
    .split('\n')
    .filter((l) => l.includes(':'))
    .map((l) => [l.slice(0, l.indexOf(':')).trim(), l.slice(l.indexOf(':') + 1).trim()]),
);

beforeAll(async () => {
  db = await testDb();
  const build = await runToEnd('npm', ['run', 'build', '--silent'], cleanEnv({}));
  expect(build.code, build.stdout + build.stderr).toBe(0);
  // a bound only against a hang: a loaded 2-core machine builds in minutes
}, 600_000);
afterAll(async () => {
  for (const p of procs) await p.stop();
  await db.close();
});

it('the Procfile runs compiled JavaScript: release migrates, web answers, worker starts', async () => {
  for (const role of ['release', 'web', 'worker']) expect(procfile[role], role).toMatch(/^node dist\//);
  const env = { DATABASE_URL: db.url, LOG_LEVEL: 'warn', CHROMIUM_PATH: '/nonexistent', SMTP_URL: 'smtp://127.0.0.1:9' };
  const release = await runToEnd('sh', ['-c', procfile.release!], cleanEnv(env));
  expect(release.code, release.stderr).toBe(0);

  const port = await freePort();
  const web = spawnGroup('sh', ['-c', `exec ${procfile.web}`], cleanEnv({ ...env, PORT: String(port), WORKER: 'off' }));
  procs.push(web);
  await waitUntil('web /readyz', () => fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status === 200), 60_000);
  const ws = await makeWorkspace(db.sql);
  const token = (await makeToken(db.sql, ws, await makeUser(db.sql, ws, { role: 'owner' }))).token;
  const workflow = await fetch(`http://127.0.0.1:${port}/api/w/${ws.slug}/workflow`, { headers: { authorization: `Bearer ${token}` } });
  expect(workflow.status).toBe(200);
  expect(workflow.headers.get('api-version')).toMatch(/^\d+\.\d+\.\d+$/);
  expect((await fetch(`http://127.0.0.1:${port}/api/docs`)).status).toBe(200);

  const worker = spawnGroup('sh', ['-c', `exec ${procfile.worker}`], cleanEnv(env));
  procs.push(worker);
  // the worker is up once it beats (src/jobs/liveness.ts)
  await waitUntil('a worker heartbeat', async () => (await db.sql`select 1 from worker_heartbeats`).length > 0, 60_000);
  expect(worker.output()).not.toMatch(/Error/);
}, 240_000);
