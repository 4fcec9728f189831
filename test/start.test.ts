import { chmod, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { freePort } from './setup/global.ts';
import { cleanEnv, spawnGroup, type Spawned } from './helpers/spawn.ts';

let started: Spawned | undefined;
let dir = '';
afterAll(async () => {
  await started?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('npm start on a fresh data folder becomes ready and prints a working demo token', async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'wt-start-'));
  await chmod(dir, 0o777);
  const port = await freePort();
  const pgPort = await freePort();
  const began = Date.now();
  started = spawnGroup(
    'npm',
    ['start', '--silent'],
    cleanEnv({ DATA_DIR: path.join(dir, 'data'), PORT: String(port), EMBEDDED_PG_PORT: String(pgPort), LOG_LEVEL: 'warn' }),
  );
  let ready = false;
  // A bound only against a hang: how fast it starts is measured by `npm run bench startup`, not here.
  while (!ready && Date.now() - began < 120_000) {
    ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (!ready) await new Promise((r) => setTimeout(r, 100));
  }
  expect(ready, started.output()).toBe(true);

  // The first start prints how to log in and a demo token that works.
  const token = /API token: (wt_[A-Za-z0-9]{40})/.exec(started.output())?.[1];
  expect(token, started.output()).toBeDefined();
  const res = await fetch(`http://127.0.0.1:${port}/api/w/northwind/workflow`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  const login = await fetch(`http://127.0.0.1:${port}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'nora@northwind.test', password: 'northwind-demo' }),
  });
  expect(login.status).toBe(200);

  // SIGTERM to the process group: the service shuts down and takes its embedded PostgreSQL with it.
  await started.stop();
  started = undefined;
  // PostgreSQL's own shutdown may finish a moment after the service's process has exited.
  const pgUp = () =>
    new Promise<boolean>((resolve) => {
      const s = net.connect({ port: pgPort, host: '127.0.0.1' });
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
  const until = Date.now() + 30_000;
  while ((await pgUp()) && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
  expect(await pgUp()).toBe(false);
}, 180_000);

it('a start that fails after its embedded PostgreSQL is up (the port is taken) exits non-zero and stops that PostgreSQL', async () => {
  const failDir = await mkdtemp(path.join(os.tmpdir(), 'wt-start-fail-'));
  await chmod(failDir, 0o777);
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const port = (taken.address() as net.AddressInfo).port;
  const pgPort = await freePort();
  try {
    const run = spawnGroup(
      'node',
      ['--import', 'tsx', 'src/main.ts', 'web'],
      cleanEnv({ DATA_DIR: path.join(failDir, 'data'), PORT: String(port), EMBEDDED_PG_PORT: String(pgPort), LOG_LEVEL: 'warn' }),
    );
    const code = await Promise.race([run.exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 120_000))]);
    if (code === 'hung') await run.stop();
    expect(code, run.output()).not.toBe('hung');
    expect(code, run.output()).not.toBe(0);
    expect(run.output()).toMatch(/EADDRINUSE/);
    expect(await pgListening(pgPort), 'the embedded PostgreSQL outlived the failed start').toBe(false);
  } finally {
    taken.close();
    await rm(failDir, { recursive: true, force: true });
  }
}, 180_000);

/** Whether something accepts connections on the port, waiting up to 30 s for a shutdown that is under way to finish. */
async function pgListening(port: number): Promise<boolean> {
  const up = () =>
    new Promise<boolean>((resolve) => {
      const s = net.connect({ port, host: '127.0.0.1' });
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
  const until = Date.now() + 30_000;
  while ((await up()) && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
  return up();
}
