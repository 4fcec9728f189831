import type { Server } from 'node:http';
import { loadConfig, ConfigError } from './config.ts';
import { TokenVerifier } from './core/auth/tokens.ts';
import { LoginGuard } from './core/auth/login-guard.ts';
import { startCaches, stopCaches } from './core/cache.ts';
import { DEMO_PASSWORD, DEMO_SLUG, ensureDemo } from './core/demo/seed.ts';
import { migrate } from './db/migrate.ts';
import { openDatabase } from './db/open.ts';
import { buildApp } from './http/app.ts';
import { startWorker } from './jobs/worker.ts';
import { makeLogger } from './log.ts';

/** `npm start` runs web and worker in one process; the Procfile runs them apart (`web`, `worker`). */
async function main(role: 'all' | 'web' | 'worker') {
  const config = loadConfig();
  const log = makeLogger(config.LOG_LEVEL);
  const db = await openDatabase(config, log);
  const applied = await migrate(db.sql, db.url);
  if (applied.length) log.info({ applied }, 'migrations applied');

  const closers: (() => Promise<void>)[] = [];
  if (role !== 'worker') {
    const [{ n }] = await db.sql<[{ n: number }]>`select count(*)::int as n from workspaces`;
    if (n === 0) announceDemo(await ensureDemo(db.sql), config.HOST, config.PORT);
    else
      console.log(
        `Demo login: http://${config.HOST}:${config.PORT} as nora@northwind.test / ${DEMO_PASSWORD} (workspace "${DEMO_SLUG}"); fresh tokens: npx wt demo --json`,
      );

    const verifier = new TokenVerifier(db.sql, config.TOKEN_CACHE_SECONDS * 1000);
    await verifier.listen();
    const caches = await startCaches(db.sql);
    const app = buildApp({ sql: db.sql, config, log, verifier, caches, loginGuard: new LoginGuard() });
    const server: Server = await new Promise((resolve) => {
      const s = app.listen(config.PORT, config.HOST, () => resolve(s));
    });
    log.info({ url: `http://${config.HOST}:${config.PORT}` }, 'listening');
    closers.push(
      () => new Promise<void>((resolve) => server.close(() => resolve())),
      () => verifier.close(),
      () => stopCaches(caches),
    );
  }
  if (role !== 'web' && config.WORKER === 'on') {
    const runner = await startWorker(db.url, log);
    closers.push(() => runner.stop());
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    for (const close of closers) await close().catch((err) => log.error({ err }, 'close failed'));
    await db.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

function announceDemo(demo: Awaited<ReturnType<typeof ensureDemo>>, host: string, port: number) {
  const base = `http://${host}:${port}`;
  console.log(
    [
      '',
      `Demo workspace "${demo.slug}" created.`,
      `  Log in:    curl -c cookies -H 'content-type: application/json' -d '{"email":"${demo.people.owner.email}","password":"${demo.people.owner.password}"}' ${base}/api/auth/login`,
      `  API token: ${demo.people.owner.token}`,
      `  Try:       curl -H 'Authorization: Bearer ${demo.people.owner.token}' ${base}/api/w/${demo.slug}/workflow`,
      `  Everyone:  npx wt demo --json`,
      '',
    ].join('\n'),
  );
}

const role = (process.argv[2] ?? 'all') as 'all' | 'web' | 'worker';
main(['all', 'web', 'worker'].includes(role) ? role : 'all').catch((err) => {
  if (err instanceof ConfigError) console.error(err.message);
  else console.error(err);
  process.exit(1);
});
