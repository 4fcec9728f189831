import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { connect, ensureDatabase } from '../src/db/connect.ts';
import { startEmbedded } from '../src/db/embedded.ts';
import { migrate } from '../src/db/migrate.ts';
import { ensureDemo } from '../src/core/demo/seed.ts';
import { spawnGroup, type Spawned } from '../test/helpers/spawn.ts';
import { freePort, withDatabase } from '../test/setup/global.ts';
import { serviceEnv, settle, table, TARGET_PREFIX } from './lib.ts';
import { seedBigWorkspace, type BigWorkspace } from './seed.ts';
import type { BenchEnv, Scenario } from './scenario.ts';
import { board } from './scenarios/board.ts';
import { tickets } from './scenarios/tickets.ts';
import { time } from './scenarios/time.ts';
import { mcp } from './scenarios/mcp.ts';
import { changes } from './scenarios/changes.ts';
import { workflow } from './scenarios/workflow.ts';
import { load } from './scenarios/load.ts';
import { billing } from './scenarios/billing.ts';
import { mail } from './scenarios/mail.ts';
import { startup } from './scenarios/startup.ts';
import { ops } from './scenarios/ops.ts';
import { jobs } from './scenarios/jobs.ts';
import { scale } from './scenarios/scale.ts';

const scenarios: Scenario[] = [workflow, tickets, time, board, changes, mcp, load, billing, mail, startup, ops, jobs, scale];

async function waitFor(url: string, proc: Spawned) {
  for (let i = 0; i < 300; i++) {
    if (
      await fetch(url).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server did not start: ${proc.output()}`);
}

/**
 * `npm run bench [scenario...]`: a real server (own process) over a seeded database, a bare
 * Koa baseline (own process), and load from this process with autocannon, in one run.
 */
async function main() {
  const only = process.argv.slice(2);
  const chosen = only.length ? scenarios.filter((s) => only.includes(s.name)) : scenarios;
  let adminUrl = process.env.DATABASE_URL;
  let stopPg = async () => {};
  let dir = '';
  if (!adminUrl) {
    dir = await mkdtemp(path.join(os.tmpdir(), 'wt-bench-'));
    await chmod(dir, 0o777);
    const pg = await startEmbedded({ dir: path.join(dir, 'pg'), port: await freePort(), fast: true });
    adminUrl = pg.url('postgres');
    stopPg = pg.stop;
  }
  const dbName = `wt_bench_${process.pid}`;
  await ensureDatabase(adminUrl, dbName);
  const dbUrl = withDatabase(adminUrl, dbName);
  const sql = connect(dbUrl, { max: 4 });
  const procs: Spawned[] = [];
  try {
    await migrate(sql, dbUrl);
    const demo = await ensureDemo(sql);
    let big: BigWorkspace | null = null;
    if (chosen.some((s) => s.needsBig)) {
      const began = Date.now();
      big = await seedBigWorkspace(sql);
      console.log(`seeded ${big.tickets} tickets in ${((Date.now() - began) / 1000).toFixed(1)} s`);
    }
    await sql`vacuum analyze`;

    const apiPort = await freePort();
    const barePort = await freePort();
    const env = serviceEnv(dbUrl, apiPort);
    const api = spawnGroup('node', ['--import', 'tsx', 'src/main.ts', 'web'], env);
    const bare = spawnGroup('node', ['--import', 'tsx', 'bench/bare-server.ts', String(barePort), dbUrl, demo.slug], env);
    procs.push(api, bare);
    await waitFor(`http://127.0.0.1:${apiPort}/readyz`, api);
    await waitFor(`http://127.0.0.1:${barePort}/`, bare);

    const benv: BenchEnv = { api: `http://127.0.0.1:${apiPort}`, bare: `http://127.0.0.1:${barePort}`, sql, dbUrl, demo, big };
    console.log(`bench: ${os.cpus().length} cores, node ${process.version}, scenarios: ${chosen.map((s) => s.name).join(', ')}\n`);
    const targets: string[] = [];
    for (const s of chosen) {
      // the targets are for a quiet machine: wait out what the previous scenario left running (autovacuum after the mix)
      const quiet = process.env.BENCH_SETTLE === 'off' ? 'started at once (BENCH_SETTLE=off)' : await settle();
      const { rows, notes } = await s.run(benv);
      console.log(`## ${s.name}\n${rows.length ? `${table(rows)}\n` : ''}${[quiet, ...notes].map((n) => `- ${n}`).join('\n')}\n`);
      targets.push(...notes.filter((n) => n.startsWith(TARGET_PREFIX)).map((n) => `${s.name}: ${n}`));
    }
    // every scenario's `target(...)` lines again, together (load average: absolute times move with it)
    const missed = targets.filter((t) => t.endsWith('MISSED')).length;
    console.log(
      `## targets (${targets.length - missed} OK, ${missed} MISSED; load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')})\n${targets.map((t) => `- ${t}`).join('\n')}\n`,
    );
  } finally {
    for (const p of procs) await p.stop();
    await sql.end();
    const admin = connect(adminUrl, { max: 1 });
    await admin.unsafe(`drop database if exists ${dbName} with (force)`).catch(() => {});
    await admin.end();
    await stopPg();
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
