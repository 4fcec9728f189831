import { loadConfig, ConfigError } from './config.ts';
import { TokenVerifier } from './core/auth/token-verifier.ts';
import { limitsFromConfig } from './core/limits/from-config.ts';
import { loadSecretBox } from './core/mail/secret-box.ts';
import { assertMailboxKey, SecretKeyMismatch } from './core/mail/secret-check.ts';
import { outboundGuardFromConfig } from './core/net/outbound.ts';
import { startCaches, stopCaches } from './core/cache.ts';
import { DEMO_PASSWORD, DEMO_SLUG, ensureDemo } from './core/demo/seed.ts';
import { migrate } from './db/migrate.ts';
import { isConnectionError, SERVICE_IDLE_SECONDS } from './db/connect.ts';
import { openDatabase } from './db/open.ts';
import { makeLogger } from './log.ts';

/** In-flight HTTP requests get this long after SIGTERM; then their connections are closed. */
const HTTP_DRAIN_MS = 10_000;
/** Running jobs get this long; then graphile-worker signals their abortSignal. */
const JOB_DRAIN_MS = 10_000;
/** Past this the process exits non-zero whatever is still running. */
const HARD_STOP_MS = 25_000;

/**
 * What only the web role runs (Koa, the router, MCP, OAuth) and what only the worker runs
 * (graphile-worker's runner, Chromium's driver, IMAP and SMTP clients, the outbox server): loaded
 * by the role that needs them, so a web process never loads playwright-core or imapflow and a
 * worker never loads Koa or the MCP SDK (a smaller process that starts sooner).
 */
const webParts = async () => {
  const [{ buildApp }, { drainHttp, listen }, { markDraining }] = await Promise.all([
    import('./app.ts'),
    import('./http/server.ts'),
    import('./http/routes/health.ts'),
  ]);
  return { buildApp, drainHttp, listen, markDraining };
};
const workerParts = async () => {
  const [{ mailFromConfig }, { createPdfRenderer, findChromium }, { startWorker }] = await Promise.all([
    import('./jobs/machinery/mail-from-config.ts'),
    import('./jobs/machinery/pdf.ts'),
    import('./jobs/worker.ts'),
  ]);
  return { mailFromConfig, createPdfRenderer, findChromium, startWorker };
};

/** `npm start` runs web and worker in one process; the Procfile runs them apart (`web`, `worker`). */
async function main(role: 'all' | 'web' | 'worker') {
  const config = loadConfig();
  // The key sealing stored secrets (mailbox passwords): WT_SECRET_KEY, or on the embedded default one made
  // once under DATA_DIR now, before the web and worker roles need it.
  const secrets = loadSecretBox(config);
  // Human-readable lines for a person at a terminal; JSON for whatever collects a service's output.
  const log = makeLogger(config.LOG_LEVEL, process.stdout.isTTY ? 'pretty' : false);
  // a service's connections outlive a quiet minute (db/connect.ts SERVICE_IDLE_SECONDS)
  const db = await openDatabase(config, log, { idleSeconds: SERVICE_IDLE_SECONDS });
  // Drained in parallel on SIGTERM (new work is refused at once); then the listeners and the pool.
  const drains: (() => Promise<void>)[] = [];
  const closers: (() => Promise<void>)[] = [];
  // /readyz answers 503 from the first moment of a shutdown (set by the web role)
  let markDraining = () => {};
  // A start that fails part way (a migration, a port in use, the mailbox key) stops what it started,
  // the embedded PostgreSQL included, before the error ends the process: it would outlive it.
  try {
    const applied = await migrate(db.sql, db.url);
    if (applied.length) log.info({ applied }, 'migrations applied');
    // Every role: the web process seals new mailbox passwords, the worker opens them.
    await assertMailboxKey(db.sql, secrets);

    if (role !== 'worker') {
      const { buildApp, drainHttp, listen, markDraining: draining } = await webParts();
      markDraining = draining;
      const [{ n }] = await db.sql<[{ n: number }]>`select count(*)::int as n from workspaces`;
      // Demo credentials are printed by the embedded default only: a process on DATABASE_URL is someone's service.
      const embedded = !config.DATABASE_URL;
      if (n === 0) announceDemo(await ensureDemo(db.sql), config.HOST, config.PORT, embedded);
      else if (embedded)
        console.log(
          `Demo login: http://${config.HOST}:${config.PORT}/ops as nora@northwind.test / ${DEMO_PASSWORD} (workspace "${DEMO_SLUG}"); fresh tokens: npx wt demo --json`,
        );

      const verifier = new TokenVerifier(db.sql, config.TOKEN_CACHE_SECONDS * 1000);
      await verifier.listen();
      const caches = await startCaches(db.sql);
      const limits = limitsFromConfig(db.sql, config, log);
      const app = buildApp({ sql: db.sql, config, log, verifier, caches, ...limits, mailbox: { secrets, outbound: outboundGuardFromConfig(config) } });
      const server = await listen(app, config.PORT, config.HOST);
      const base = `http://${config.HOST}:${config.PORT}`;
      log.info({ url: base }, 'listening');
      console.log(
        [
          `Listening on ${base}/ (links to everything below)`,
          `  Console:       ${base}/ops`,
          `  API reference: ${base}/api/docs (OpenAPI 3.1: ${base}/api/openapi.json)`,
          `  MCP:           ${base}/mcp (Streamable HTTP: OAuth 2.1, or Authorization: Bearer wt_…; stdio: WT_TOKEN=wt_… npx wt mcp)`,
          `  Health:        ${base}/healthz, ${base}/readyz`,
        ].join('\n'),
      );
      drains.push(() =>
        drainHttp(server, {
          timeoutMs: HTTP_DRAIN_MS,
          onForce: () => log.warn({ ms: HTTP_DRAIN_MS }, 'requests still running after the drain period; closing their connections'),
        }),
      );
      closers.push(
        () => verifier.close(),
        () => stopCaches(caches),
        () => limits.limits.stop(),
      );
    }
    if (role !== 'web' && config.WORKER === 'on') {
      const { mailFromConfig, createPdfRenderer, findChromium, startWorker } = await workerParts();
      // Deliveries go to SMTP_URL; without it, to a local outbox server started here (the embedded default).
      const mail = await mailFromConfig(config, log, db.sql);
      const outbox = mail.outbox;
      if (outbox) {
        console.log(`No SMTP_URL: outgoing mail goes to ${outbox.url} and is stored as .eml files in ${outbox.dir}`);
        closers.push(() => outbox.close());
      }
      // pdf documents where a Chromium is installed: one browser per worker process, started on first use.
      const pdf = createPdfRenderer(findChromium(config.CHROMIUM_PATH), log);
      if (pdf) closers.push(() => pdf.close());
      const services = {
        sql: db.sql,
        now: () => new Date(),
        log,
        pdf,
        mailer: mail.mailer,
        mailFrom: config.MAIL_FROM,
        publicUrl: config.PUBLIC_URL ?? `http://${config.HOST}:${config.PORT}`,
        outbound: outboundGuardFromConfig(config),
        secrets,
        historyRetentionDays: config.JOB_HISTORY_RETENTION_DAYS,
      };
      const staleMs = config.WORKER_STALE_SECONDS * 1000;
      const worker = await startWorker(db.url, services, { drainMs: JOB_DRAIN_MS, liveness: { staleMs, intervalMs: staleMs / 6 } });
      // A runner that ends (PostgreSQL went away) is replaced by startWorker itself; the heartbeat stops meanwhile.
      drains.push(() => worker.stop());
    }
  } catch (err) {
    await Promise.all(drains.map((drain) => drain().catch(() => {})));
    for (const close of closers) await close().catch(() => {});
    await db.close().catch(() => {});
    throw err;
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    markDraining();
    setTimeout(() => {
      log.error({ ms: HARD_STOP_MS }, 'shutdown took too long; exiting');
      process.exit(1);
    }, HARD_STOP_MS).unref();
    await Promise.all(drains.map((drain) => drain().catch((err: unknown) => log.error({ err }, 'drain failed'))));
    for (const close of closers) await close().catch((err: unknown) => log.error({ err }, 'close failed'));
    await db.close();
    log.info({ signal }, 'stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  // A lost database connection rejects every query queued on it with one socket error. One such
  // rejection had no handler and Node's default ended the process (1 run of about 10 of
  // test/outage.test.ts, and test/pg-driver.test.ts in CI): postgres.js's own array-type fetch on a
  // new connection, now caught by patches/postgres+3.4.9.patch. Should another appear, it is logged
  // and the process serves on (the request that owned it was answered 503); anything else ends it.
  process.on('unhandledRejection', (reason: unknown) => {
    if (isConnectionError(reason)) {
      log.warn({ err: reason }, 'a database connection error that nothing awaited; serving on');
      return;
    }
    log.fatal({ err: reason }, 'unhandled rejection');
    process.exit(1);
  });
}

function announceDemo(demo: Awaited<ReturnType<typeof ensureDemo>>, host: string, port: number, embedded: boolean) {
  const base = `http://${host}:${port}`;
  if (!embedded) {
    console.log(`Demo workspace "${demo.slug}" created; its log-ins and tokens: npx wt demo --json`);
    return;
  }
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
  if (err instanceof ConfigError || err instanceof SecretKeyMismatch) console.error(err.message);
  else console.error(err);
  process.exit(1);
});
