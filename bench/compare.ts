import { execFileSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { connect, ensureDatabase, type Db } from '../src/db/connect.ts';
import { startEmbedded } from '../src/db/embedded.ts';
import { migrate } from '../src/db/migrate.ts';
import { encodeUpdatedCursor } from '../src/core/tickets/cursor.ts';
import { ensureDemo, type Demo } from '../src/core/demo/seed.ts';
import { spawnGroup, type Spawned } from '../test/helpers/spawn.ts';
import { freePort, withDatabase } from '../test/setup/global.ts';
import { latency, mixedLoad, serviceEnv, target } from './lib.ts';
import { loadMix, loadSetup, preflight, writeChecks } from './scenarios/load.ts';
import { seedBigWorkspace } from './seed.ts';

/**
 * `npm run bench:compare -- <git ref> [rounds] [--load]`: the tree at <ref> and this tree serve
 * at once over ONE database and are measured in alternating order (before, after, after, before,
 * ...) round after round, so both sides meet the same machine load.
 *
 * - Default: the read paths of `npm run bench -- workflow tickets board` over the seeded large
 *   workspace (bench/seed.ts, BENCH_TICKETS), one web process per tree; each side's median p50 and
 *   p99 over the rounds and the after/before ratio.
 * - `--load` (issue 25 "Load"): the 200-client mixed load of bench/scenarios/load.ts
 *   (BENCH_LOAD_SECONDS per run, 30 by default; BENCH_LOAD_CLIENTS) on the demo workspace, two web
 *   processes per tree; throughput per round and side, the after/before ratio of the medians
 *   (target at least 2x), 5xx answers and the lost or doubled writes of every run, and the load
 *   average around each run.
 *
 * The old tree is checked out as a git worktree under the system temp folder (its own per run,
 * removed at the end) and shares node_modules.
 */
async function main() {
  const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const mode = process.argv.includes('--load') ? 'load' : 'reads';
  const ref = args[0] ?? 'ede564e';
  const rounds = Number(args[1] ?? 3);
  const before = path.join(os.tmpdir(), `wt-before-${ref.replace(/[^\w.-]/g, '_')}-${process.pid}`);
  execFileSync('git', ['worktree', 'add', '--detach', before, ref], { stdio: 'inherit' });
  symlinkSync(path.resolve('node_modules'), path.join(before, 'node_modules'));
  const dir = await mkdtemp(path.join(os.tmpdir(), 'wt-compare-'));
  await chmod(dir, 0o777);
  const pg = await startEmbedded({ dir: path.join(dir, 'pg'), port: await freePort(), fast: true });
  const adminUrl = pg.url('postgres');
  const dbUrl = withDatabase(adminUrl, 'wt_compare');
  await ensureDatabase(adminUrl, 'wt_compare');
  const sql = connect(dbUrl, { max: 4 });
  const procs: Spawned[] = [];
  const start = (cwd: string, port: number) => {
    const p = spawnGroup('sh', ['-c', `cd ${cwd} && exec node --import tsx src/main.ts web`], serviceEnv(dbUrl, port));
    procs.push(p);
    return p;
  };
  try {
    await migrate(sql, dbUrl);
    const demo = await ensureDemo(sql);
    if (mode === 'load') await compareLoad({ ref, rounds, before, sql, demo, start });
    else await compareReads({ ref, rounds, before, sql, start });
  } finally {
    for (const p of procs) await p.stop();
    await sql.end();
    await pg.stop();
    await rm(dir, { recursive: true, force: true });
    execFileSync('git', ['worktree', 'remove', '--force', before], { stdio: 'inherit' });
  }
}

interface Sides {
  ref: string;
  rounds: number;
  /** The old tree's folder. */
  before: string;
  sql: Db;
  start: (cwd: string, port: number) => Spawned;
}

async function compareReads({ ref, rounds, before, sql, start }: Sides) {
  const big = await seedBigWorkspace(sql);
  await sql`vacuum analyze`;
  const ports = { before: await freePort(), after: await freePort() };
  start(before, ports.before);
  start(process.cwd(), ports.after);
  for (const port of Object.values(ports)) await ready(`http://127.0.0.1:${port}/readyz`);

  const [deep] = await sql<{ at: string; id: string }[]>`
    select to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as at, id from tickets
    where project_id = any(${big.restrictedProjectIds}::uuid[]) and not archived
    order by updated_at desc, id desc offset 49999 limit 1`;
  const cursor = encodeUpdatedCursor({ at: deep!.at, id: deep!.id });
  const restricted = { authorization: `Bearer ${big.restrictedToken}` };
  const cases: { name: string; path: string; headers: Record<string, string>; connections: number }[] = [
    { name: 'GET /workflow', path: `/api/w/${big.slug}/workflow`, headers: restricted, connections: 1 },
    { name: 'list, first page', path: `/api/w/${big.slug}/tickets`, headers: restricted, connections: 4 },
    { name: 'list, after 50,000 rows', path: `/api/w/${big.slug}/tickets?cursor=${cursor}`, headers: restricted, connections: 4 },
    { name: 'list q=page, first page', path: `/api/w/${big.slug}/tickets?q=page`, headers: restricted, connections: 4 },
    { name: 'list q=page, after 50,000 rows', path: `/api/w/${big.slug}/tickets?q=page&cursor=${cursor}`, headers: restricted, connections: 4 },
    { name: 'list q=checkout, first page', path: `/api/w/${big.slug}/tickets?q=checkout`, headers: restricted, connections: 4 },
    {
      name: 'GET /tickets/{ref}, 200 events + 100 comments',
      path: `/api/w/${big.slug}/tickets/${big.heavyRef}`,
      headers: { authorization: `Bearer ${big.busyToken}` },
      connections: 4,
    },
    { name: 'GET /board, member token on 6 projects', path: `/api/w/${big.slug}/board`, headers: restricted, connections: 4 },
    { name: 'GET /board, owner (all tickets)', path: `/api/w/${big.slug}/board`, headers: { authorization: `Bearer ${big.ownerToken}` }, connections: 1 },
    { name: 'GET /my, member with 2,000 assigned', path: `/api/w/${big.slug}/my`, headers: { authorization: `Bearer ${big.busyToken}` }, connections: 4 },
    { name: 'GET /changes', path: `/api/w/${big.slug}/changes`, headers: restricted, connections: 4 },
  ];
  const results = new Map<string, { before: { p50: number; p99: number }[]; after: { p50: number; p99: number }[] }>();
  for (let r = 0; r < rounds; r++) {
    for (const c of cases) {
      const order = (r + cases.indexOf(c)) % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const);
      for (const side of order) {
        const m = await latency(c.name, `http://127.0.0.1:${ports[side]}${c.path}`, {
          headers: c.headers,
          connections: c.connections,
          durationMs: 3000,
          warmupMs: 500,
        });
        if (m.non2xx || m.errors) throw new Error(`${side} ${c.name}: ${m.non2xx} non-2xx, ${m.errors} errors`);
        const entry = results.get(c.name) ?? { before: [], after: [] };
        entry[side].push({ p50: m.p50, p99: m.p99 });
        results.set(c.name, entry);
      }
    }
    console.error(`round ${r + 1}/${rounds} done`);
  }
  console.log(
    `\n## before (${ref}) vs after (this tree), ${rounds} interleaved rounds, one database; ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)}\n`,
  );
  console.log('| scenario | before p50 / p99 ms | after p50 / p99 ms | after/before p50 | per-round p50 ratios |');
  console.log('|---|---|---|---|---|');
  for (const [name, e] of results) {
    const b50 = median(e.before.map((x) => x.p50));
    const a50 = median(e.after.map((x) => x.p50));
    const ratios = e.after.map((a, i) => (a.p50 / e.before[i]!.p50).toFixed(2)).join(', ');
    console.log(
      `| ${name} | ${b50.toFixed(2)} / ${median(e.before.map((x) => x.p99)).toFixed(2)} | ${a50.toFixed(2)} / ${median(e.after.map((x) => x.p99)).toFixed(2)} | ${(a50 / b50).toFixed(2)} | ${ratios} |`,
    );
  }
}

async function compareLoad({ ref, rounds, before, sql, demo, start }: Sides & { demo: Demo }) {
  const seconds = Number(process.env.BENCH_LOAD_SECONDS ?? 30);
  const clients = Number(process.env.BENCH_LOAD_CLIENTS ?? 200);
  await sql`vacuum analyze`;
  const setup = await loadSetup(sql, demo);
  const sides = {
    before: { cwd: before, ports: [await freePort(), await freePort()], procs: [] as Spawned[] },
    after: { cwd: process.cwd(), ports: [await freePort(), await freePort()], procs: [] as Spawned[] },
  };
  const bases = (side: keyof typeof sides) => sides[side].ports.map((p) => `http://127.0.0.1:${p}`);
  for (const s of Object.values(sides)) for (const port of s.ports) s.procs.push(start(s.cwd, port));
  for (const side of ['before', 'after'] as const) {
    for (const base of bases(side)) {
      await ready(`${base}/readyz`);
      await preflight(base, setup);
    }
  }

  interface Run {
    round: number;
    side: 'before' | 'after';
    rps: number;
    p50: number;
    p99: number;
    fivexx: number;
    errors: number;
    ok: boolean;
    alive: boolean;
    lines: string[];
    load: [number, number];
  }
  const runs: Run[] = [];
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const);
    for (const side of order) {
      const run = `r${r + 1}-${side}`;
      const load0 = os.loadavg()[0]!;
      const m = await mixedLoad(`${side}, ${clients} clients, 2 web processes`, {
        bases: bases(side),
        tokens: setup.tokens,
        mix: loadMix(setup, run),
        connections: clients,
        durationMs: seconds * 1000,
      });
      const load1 = os.loadavg()[0]!;
      const checks = await writeChecks(sql, setup, run, m);
      const alive = sides[side].procs.every((p) => p.child.exitCode === null);
      runs.push({
        round: r + 1,
        side,
        rps: m.rps,
        p50: m.p50,
        p99: m.p99,
        fivexx: checks.fivexx,
        errors: m.errors,
        ok: checks.ok,
        alive,
        lines: checks.lines,
        load: [load0, load1],
      });
      console.error(`round ${r + 1}/${rounds} ${side}: ${m.rps.toFixed(0)} req/s, 5xx ${checks.fivexx}, writes ${checks.ok ? 'OK' : 'FAILED'}`);
    }
  }

  console.log(
    `\n## 200-client mixed load: before (${ref}) vs after (this tree), ${rounds} interleaved rounds of ${seconds} s, ${clients} clients, 2 web processes per tree, one database; ${os.cpus().length} cores\n`,
  );
  console.log(
    '| round | tree | req/s | p50 ms | p99 ms | 5xx | no answer | writes (lost / duplicated) | processes alive | load average (1 min) before → after |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const x of runs)
    console.log(
      `| ${x.round} | ${x.side} | ${x.rps.toFixed(0)} | ${x.p50.toFixed(1)} | ${x.p99.toFixed(1)} | ${x.fivexx} | ${x.errors} | ${x.ok ? 'OK' : 'FAILED'} | ${x.alive} | ${x.load[0].toFixed(1)} → ${x.load[1].toFixed(1)} |`,
    );
  for (const x of runs) for (const l of x.lines) console.log(`- round ${x.round} ${x.side}: ${l}`);
  const of = (side: 'before' | 'after') => runs.filter((x) => x.side === side);
  const rps = (side: 'before' | 'after') => median(of(side).map((x) => x.rps));
  const perRound = of('after').map((a) => (a.rps / of('before').find((b) => b.round === a.round)!.rps).toFixed(2));
  console.log(
    `\nthroughput (median req/s): before ${rps('before').toFixed(0)}, after ${rps('after').toFixed(0)}; per-round after/before ${perRound.join(', ')}`,
  );
  for (const side of ['before', 'after'] as const) {
    const fivexx = of(side).reduce((n, x) => n + x.fivexx, 0);
    const clean = fivexx === 0 && of(side).every((x) => x.ok && x.alive);
    console.log(
      `${side}: 5xx ${fivexx}, writes lost or duplicated in ${of(side).filter((x) => !x.ok).length} run(s), every process alive: ${of(side).every((x) => x.alive)} ${clean ? 'OK' : 'FAILED'}`,
    );
  }
  console.log(
    target({
      issue: 25,
      name: `200-client mixed load, throughput this tree / ${ref}`,
      value: rps('after') / rps('before'),
      limit: 2,
      unit: 'x',
      atLeast: true,
    }),
  );
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

// a loaded machine (load average above 10 on 2 cores) takes more than 30 s to start a server under tsx
async function ready(url: string) {
  for (let i = 0; i < 1200; i++) {
    if (
      await fetch(url).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`not ready: ${url}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
